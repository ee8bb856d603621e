// The static playground's wiring: the whole demo in this page, no server process and no key. It starts the emulator
// in-process (`docauto/emulator`'s browser entry) and the demo backend over it (www/app.mjs's `createApp`, the same
// handler `cargo xtask demo` serves), then the page code of www/public/app/ unchanged:
// - the page's `api/*` requests reach the backend through the Service Worker (sw.js), which hands each one to this
//   page and answers with what the backend answered;
// - the page's event stream (`api/events`, which app/ui.js opens as an `EventSource`) is read from the backend in
//   this page (event-source.js, set as `host.EventSource`), not through the worker: a response the worker streams is
//   still open when the page goes away, and Firefox reports each one the page stops reading as an error of the page
//   ("A ServiceWorker intercepted the request and encountered an unexpected error"), on every reload;
// - webhook deliveries go from the emulator to the backend's `/webhooks` through `deliver` (nothing leaves the page),
//   where `WebhookVerifier` checks them against the emulator's key set, fetched with `emulator.fetch`;
// - live transcription connects with `emulator.WebSocket`;
// - the emulator's `snapshot()` and what the backend knows (its runs, its deliveries) are kept in localStorage, under
//   this folder's path: a reload starts from them, the Reset button forgets them.
//
// `?timeScale=F` in the address multiplies the service's delays (default 0.5, as `cargo xtask demo`).
import { createEmulator } from "./pkg/emulator/index.js";
import { DocAuto } from "./pkg/index.js";
import { WebhookVerifier } from "./pkg/webhooks/index.js";
import { createApp } from "./backend/app.mjs";
import { h, host, showError } from "./app/ui.js";
import { isEventStream, pageEventSource } from "./event-source.js";

const BASE = new URL("./", import.meta.url);
const STORE = `docauto-playground:${BASE.pathname}`;
// Any URL will do: with `deliver`, no delivery leaves the page. https, as the service requires of an endpoint.
const WEBHOOK_URL = "https://demo-backend.test/webhooks";
const CLIENT = { logLevel: "off", dangerouslyAllowBrowser: true }; // the emulator's test key, not a secret

const $ = (id) => document.getElementById(id);
const say = (text) => {
  const notice = $("playground-notice");
  if (notice) notice.textContent = ` ${text}`;
};

function options() {
  const asked = Number(new URL(location.href).searchParams.get("timeScale"));
  const timeScale = Number.isFinite(asked) && asked > 0 && asked <= 10 ? asked : 0.5;
  return { timeScale, rateLimit: 300, control: true };
}

function loadSaved() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORE) ?? "null");
    return saved?.version === 1 && typeof saved.emulator === "string" ? saved : null;
  } catch {
    return null;
  }
}

/** Resolves once this page is controlled by sw.js (a first visit installs it; a hard reload asks to be claimed). */
async function controlled() {
  const sw = navigator.serviceWorker;
  if (!sw) {
    throw Object.assign(new Error("This browser gives this page no Service Worker (a private window, or a page not served over https or from localhost)."), { code: "no_service_worker" });
  }
  const claimed = new Promise((resolve) => sw.addEventListener("controllerchange", resolve, { once: true }));
  await sw.register(new URL("sw.js", BASE), { scope: BASE.pathname });
  if (sw.controller) return;
  const ready = await sw.ready;
  if (sw.controller) return;
  ready.active?.postMessage({ type: "docauto-playground-claim" });
  const late = new Promise((_, reject) => setTimeout(() => reject(new Error("the Service Worker did not take this page")), 10_000));
  await Promise.race([claimed, late]);
}

async function boot() {
  const saved = loadSaved();
  let backend;
  let resetting = false;
  let timer;
  const deliver = (request) => {
    later();
    return backend.fetch(request);
  };
  let emulator;
  let notice = null;
  try {
    emulator = createEmulator({ ...options(), deliver, snapshot: saved?.emulator });
  } catch (e) {
    if (!saved) throw e;
    // a state this version cannot read (another package version saved it): start afresh, and say so
    notice = `The saved playground could not be loaded (${e.code ?? e.message}); it starts empty.`;
    emulator = createEmulator({ ...options(), deliver });
  }
  const ready = controlled();

  const client = new DocAuto({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, ...CLIENT });
  const endpoints = await client.webhooks.list();
  const endpoint = endpoints.data.find((w) => w.url === WEBHOOK_URL) ?? (await client.webhooks.create({ url: WEBHOOK_URL }));
  backend = createApp({
    sdk: { DocAuto, WebhookVerifier },
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    webhookEndpointId: endpoint.id,
    controlUrl: `${emulator.url}/__emulator`,
    fetch: emulator.fetch,
    clientOptions: CLIENT,
    prefetchKeys: true,
    saved: saved?.backend,
  });

  const save = () => {
    clearTimeout(timer);
    if (resetting) return;
    try {
      localStorage.setItem(STORE, JSON.stringify({ version: 1, emulator: emulator.snapshot(), backend: backend.saved() }));
    } catch (e) {
      say(`Not saved in this browser's storage (${e.name}): a reload starts from the last save. Reset clears it.`);
    }
  };
  // after a change settles; and always as the page goes away
  function later() {
    clearTimeout(timer);
    timer = setTimeout(save, 300);
  }
  addEventListener("pagehide", save);
  document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && save());

  navigator.serviceWorker.addEventListener("message", (event) => {
    if (event.data?.type === "docauto-playground-request" && event.ports[0]) answer(backend, event.data, event.ports[0]).finally(later);
  });
  navigator.serviceWorker.startMessages();
  await ready;

  // Output files are links to the emulator's own address (https://emulator.test/...), which exists only in this page:
  // a click opens what `emulator.fetch` answers.
  document.addEventListener("click", (e) => {
    const link = e.target instanceof Element ? e.target.closest("a[href]") : null;
    if (!link || new URL(link.href).origin !== emulator.url) return;
    e.preventDefault();
    const tab = window.open("about:blank", "_blank");
    emulator.fetch(link.href).then((r) => r.blob()).then((blob) => {
      const url = URL.createObjectURL(blob);
      if (tab) tab.location.href = url;
      else location.href = url;
    }, (err) => tab?.close() ?? say(`Could not open the file: ${err.message}`));
  }, true);

  const reset = h("button", { type: "button", id: "playground-reset", title: "Forget every document, run and delivery of this playground" }, "Reset");
  reset.addEventListener("click", () => {
    resetting = true;
    clearTimeout(timer);
    localStorage.removeItem(STORE);
    emulator.close().finally(() => location.reload());
  });
  const bar = h("div", { class: "service playground", id: "playground" },
    h("span", { class: "badge info" }, "playground"), " ",
    h("span", { class: "small muted" }, "service and backend run in this page"), " ", reset,
    h("span", { id: "playground-notice", class: "small", role: "status" }));
  $("service").after(bar);
  if (notice) say(notice);
  host.WebSocket = emulator.WebSocket;
  host.EventSource = pageEventSource((url, init) => backend.fetch(backendRequest(url, init)), BASE);
  save();
}

/** The backend's request for a URL of this page: the backend's routes are at its root, this folder's path taken off. */
function backendRequest(url, init) {
  const u = new URL(url, BASE);
  return new Request(new URL(`/${u.pathname.slice(BASE.pathname.length)}${u.search}`, location.origin), init);
}

/**
 * Answers one request the Service Worker forwarded, over its port. A finite answer goes whole, in one message
 * (`{ head, body }`): the worker answers it with a complete body, so a page that goes away in the middle of it leaves
 * no half-fed stream behind. An event stream (`text/event-stream`) has no end: it goes as `{ head }`, then
 * `{ chunk }`s, until the worker says `{ cancel }` (or `{ end }`/`{ error }` if the backend ends it). So does every
 * answer to a worker that does not say `whole` (an earlier version's, which keeps the page until the new one claims
 * it).
 */
async function answer(backend, { method, url, headers, body, whole: takesWhole }, port) {
  let response;
  let whole;
  try {
    response = await backend.fetch(backendRequest(url, { method, headers, body }));
    if (takesWhole && !isEventStream(response)) whole = await response.arrayBuffer();
  } catch (e) {
    response = Response.json({ error: { code: "internal_error", message: String(e?.message ?? e), status: 500 } }, { status: 500 });
    if (takesWhole) whole = await response.arrayBuffer();
  }
  const head = { status: response.status, headers: [...response.headers] };
  if (whole) {
    port.postMessage({ head, body: whole }, [whole]);
    return port.close();
  }
  const reader = response.body?.getReader();
  let cancelled = false;
  port.onmessage = ({ data }) => {
    if (!data?.cancel) return;
    cancelled = true;
    reader?.cancel().catch(() => {});
    port.close();
  };
  port.postMessage({ head });
  if (!reader) return port.postMessage({ end: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = value.slice();
      port.postMessage({ chunk }, [chunk.buffer]);
    }
    port.postMessage({ end: true });
  } catch (e) {
    if (!cancelled) port.postMessage({ error: String(e?.message ?? e) });
  }
}

try {
  await boot();
} catch (e) {
  $("service").replaceChildren(h("span", { class: "badge bad" }, "offline"));
  showError($("boot-error"), e);
  throw e;
}
await import("./app/main.js");
