// Small helpers shared by the panels: the backend's JSON API, a DOM builder, error callouts, the event stream.

/**
 * What the page's host sets before the panels start. `WebSocket`: the class the live transcription connects with
 * (the runtime's own when unset; the static playground sets its in-process emulator's `emulator.WebSocket`).
 * `EventSource`: the class the event stream is read with (the runtime's own when unset; the static playground sets
 * one that reads its in-page backend's stream directly).
 */
export const host = { WebSocket: undefined, EventSource: undefined };

/** An error answered by the backend: `{ code, message, status, retryAfter, requestId }`. */
export class DemoError extends Error {
  constructor(fields) {
    super(fields.message ?? fields.code);
    Object.assign(this, fields);
    this.name = "DemoError";
  }
}

/** Calls the demo backend (never the service: the key lives there). Rejects with `DemoError`. */
export async function api(path, { method = "GET", body } = {}) {
  let r;
  try {
    r = await fetch(path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new DemoError({ code: "backend_unreachable", message: `The demo backend did not answer (${e.message}).` });
  }
  const text = await r.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    throw new DemoError({ code: "bad_answer", status: r.status, message: `Unexpected answer (${r.status}).` });
  }
  if (!r.ok) throw new DemoError({ status: r.status, ...(data?.error ?? { code: `http_${r.status}`, message: text }) });
  return data;
}

/** `h("div", { class: "x", onclick }, child, "text")`: an element. Attributes `false`/`null` are skipped. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const HINTS = {
  rate_limited: (e) => `Rate limited: the organization's request budget is spent. Retry after ${e.retryAfter ?? 60} s; nothing was started or billed.`,
  credits_exhausted: () => "Out of credits: nothing was started or charged. Reads still work.",
  run_expired: () => "The run passed its deadline and was purged.",
  run_not_active: () => "The run is no longer active (finished or expired): decisions and completions are closed.",
  approval_already_decided: () => "Somebody already decided this sign-off; the first decision stands.",
  invalid_schema: () => "The extraction schema breaks the service's dialect.",
  file_fetch_failed: () => "The service could not fetch that URL (the emulator fetches plain http:// only).",
  backend_unreachable: () => "Is `cargo xtask demo` still running?",
};

/** A visible error: the code as a badge, a plain explanation, the service's message and request id. */
export function errorBox(err) {
  const code = err?.code ?? "error";
  const hint = HINTS[code]?.(err);
  return h("div", { class: "error", role: "alert", "data-code": code },
    h("div", { class: "error-head" },
      h("code", { class: "badge bad" }, code),
      err?.status ? h("span", { class: "muted" }, `HTTP ${err.status}`) : null),
    hint ? h("p", {}, hint) : null,
    h("p", { class: "error-msg" }, String(err?.message ?? err)),
    err?.requestId ? h("p", { class: "muted small" }, `request ${err.requestId}`) : null);
}

/** Replaces the content of `target` with an error box (or clears it with `null`). */
export function showError(target, err) {
  target.replaceChildren(...(err ? [errorBox(err)] : []));
}

/** Seconds as `m:ss`. */
export function clock(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** A status pill. */
export function pill(status) {
  return h("span", { class: `pill s-${status}`, "data-status": status }, status.replace("_", " "));
}

const handlers = new Set();
let source = null;

/** Subscribes to the backend's relayed webhook deliveries (Server-Sent Events). */
export function onDelivery(fn) {
  handlers.add(fn);
  if (!source) {
    source = new (host.EventSource ?? EventSource)("api/events");
    source.addEventListener("delivery", (e) => {
      const record = JSON.parse(e.data);
      for (const f of handlers) f(record);
    });
  }
}
