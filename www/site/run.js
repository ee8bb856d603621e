// The Run buttons of the site's examples (progressive enhancement: every page reads the same without this script).
//
// Each code block the build marked `data-run="page"` gets Run and Edit buttons. Run takes the block's text as written
// (or as edited), strips its types (assets/ts.js) and imports it as a module of this page, where `docauto/*`
// resolve to the site's copy of the package (the page's import map) against one emulator of the service running in
// this page (`createEmulator` from `docauto/emulator`; "Reset the emulator" makes a new one). It shows what the block
// prints and any error with its `code`. The blocks are written for servers; the page gives them what they expect:
//
// - `process.env.DOCAUTO_BASE_URL` / `DOCAUTO_API_KEY`: the page emulator's address (https://emulator.test) and key;
// - `fetch` and `WebSocket` to that address are answered by `emulator.fetch` and `emulator.WebSocket` (router.js);
// - `node:fs/promises`, `node:test`, `node:assert/strict`, `node:http` and `Buffer`: small stand-ins (assets/node/);
// - a webhook receiver (a Worker's `fetch`, a route's `POST`, a `node:http` server) gets a delivery the page
//   emulator signs, through `deliver`: the runner registers an endpoint, starts an agent run that asks for an
//   approval, and hands the signed delivery to the receiver; then the same signature over a tampered body, and
//   (for a deduplicating receiver) the same delivery again;
// - a page example gets its HTML below the block, its server part started in the page (`fetch("/session")` reaches
//   it), and the microphone, or a sample sound the page makes where there is none or it is refused.
import { started as servers } from "./node/http.js";
import { runTests } from "./node/test.js";
import { RoutedWebSocket, routedFetch, serve, setPageBackend, siteRoot } from "./router.js";

const examples = [...document.querySelectorAll('[data-run="page"]')];
const EMULATOR_OPTIONS = { rateLimit: 600 };
/** The endpoint the runner's deliveries go to (nothing leaves the page: `deliver` receives them). */
const WEBHOOK_URL = "https://your-app.example/webhooks";

let emulator = null;
let stopServing = null;
let endpointId = null;
let deliveryTarget = null;
let active = null; // the output the console writes to

// -------------------------------------------------------------------------------------------------------------
// What a server-side example expects of its runtime

/** `Buffer`, as far as the examples use it: bytes (a Uint8Array) with `concat`, `from`, `toString`. */
class PageBuffer extends Uint8Array {
  static from(value, encoding) {
    if (typeof value === "string") {
      if (encoding === "base64") return PageBuffer.from(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)));
      if (encoding === "hex") return PageBuffer.from((value.match(/../g) ?? []).map((h) => parseInt(h, 16)));
      return PageBuffer.from(new TextEncoder().encode(value));
    }
    if (value instanceof ArrayBuffer) return new PageBuffer(value.slice(0));
    const out = new PageBuffer(value.length ?? value.byteLength ?? 0);
    out.set(ArrayBuffer.isView(value) ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : value);
    return out;
  }
  static concat(list, total) {
    const out = new PageBuffer(total ?? list.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of list) {
      out.set(b.subarray(0, Math.max(0, out.length - at)), at);
      at += b.length;
    }
    return out;
  }
  static isBuffer(value) {
    return value instanceof PageBuffer;
  }
  static byteLength(value) {
    return typeof value === "string" ? new TextEncoder().encode(value).length : value.byteLength;
  }
  toString(encoding = "utf8") {
    if (encoding === "base64") return btoa(String.fromCharCode(...this));
    if (encoding === "hex") return [...this].map((b) => b.toString(16).padStart(2, "0")).join("");
    return new TextDecoder().decode(this);
  }
}

function installRuntime() {
  globalThis.process ??= { env: {} };
  globalThis.Buffer ??= PageBuffer;
  globalThis.fetch = routedFetch;
  globalThis.WebSocket = RoutedWebSocket;
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
      active?.print(args.map(text).join(" "), level);
      original(...args);
    };
  }
  // On the prototype: WebKit may drop a property set on `navigator.mediaDevices` itself (it makes that object anew).
  const proto = globalThis.MediaDevices?.prototype;
  const getUserMedia = proto?.getUserMedia;
  if (getUserMedia) {
    proto.getUserMedia = async function (constraints) {
      if (constraints?.audio && document.querySelector("input.clip:checked")) {
        active?.print("(the page's sample sound plays instead of the microphone)", "note");
        return sampleSound();
      }
      try {
        return await getUserMedia.call(this, constraints);
      } catch (e) {
        if (!constraints?.audio || !["NotAllowedError", "NotFoundError", "NotReadableError", "OverconstrainedError"].includes(e?.name)) throw e;
        active?.print(`(no microphone here: ${e.name}; the page plays its sample sound instead)`, "note");
        return sampleSound();
      }
    };
  }
}

/** A value as `console.log` would show it. */
function text(value) {
  if (typeof value === "string") return value;
  if (value instanceof Error) return errorText(value);
  try {
    const seen = new WeakSet();
    return JSON.stringify(value, (_, v) => {
      if (typeof v === "bigint") return `${v}n`;
      if (v instanceof Uint8Array) return `<${v.length} bytes>`;
      if (typeof v === "object" && v !== null) {
        if (seen.has(v)) return "[Circular]";
        seen.add(v);
      }
      return v;
    }, 1)?.replace(/\n\s*/g, " ") ?? String(value);
  } catch {
    return String(value);
  }
}

function errorText(e) {
  if (!(e instanceof Error)) return `thrown: ${text(e)}`;
  const facts = ["code", "status"].filter((k) => e[k] !== undefined && e[k] !== null).map((k) => `${k}: ${e[k]}`);
  return `${e.name}: ${e.message}${facts.length ? `\n  ${facts.join(", ")}` : ""}`;
}

/**
 * The sample sound, for a page without a microphone (or whose microphone is refused): a stream from an AudioContext
 * playing 1.2 s of a voiced buzz then 1.5 s of silence, over and over. The emulator transcribes sound, not words, so
 * it hears this as speech. Stopping the track closes the context.
 */
function sampleSound() {
  const context = new AudioContext();
  const destination = context.createMediaStreamDestination();
  const voice = new OscillatorNode(context, { type: "sawtooth", frequency: 150 });
  const formant = new BiquadFilterNode(context, { type: "bandpass", frequency: 700, Q: 1 });
  const gain = new GainNode(context, { gain: 0 });
  voice.connect(formant).connect(gain).connect(destination);
  const t0 = context.currentTime + 0.05;
  for (let i = 0; i < 40; i++) {
    const at = t0 + i * 2.7;
    gain.gain.setValueAtTime(0, at);
    gain.gain.linearRampToValueAtTime(0.6, at + 0.08);
    gain.gain.setValueAtTime(0.6, at + 1.1);
    gain.gain.linearRampToValueAtTime(0, at + 1.2);
  }
  voice.start();
  const [track] = destination.stream.getAudioTracks();
  const stop = track.stop.bind(track);
  track.stop = () => {
    stop();
    context.close().catch(() => {});
  };
  return destination.stream;
}

// -------------------------------------------------------------------------------------------------------------
// The page's emulator

/**
 * The emulator flags the page's examples ask for (`emulator-args`), as `createEmulator` options; `?timeScale=F` in
 * the page's address multiplies the service's delays (as in the playground; the site's tests run faster with it).
 */
function emulatorOptions() {
  const options = { ...EMULATOR_OPTIONS };
  const scale = Number(new URLSearchParams(location.search).get("timeScale"));
  if (scale > 0) options.timeScale = scale;
  for (const el of examples) {
    const args = attrsOf(el)["emulator-args"]?.split(/\s+/) ?? [];
    for (let i = 0; i < args.length; i++) {
      if (args[i] === "--control") options.control = true;
      else if (args[i] === "--time-scale") options.timeScale = Number(args[++i]);
      else if (args[i] === "--rate-limit") options.rateLimit = Number(args[++i]);
      else if (args[i] === "--scope-keys") options.scopeKeys = true;
    }
  }
  return options;
}

async function pageEmulator() {
  if (emulator) return emulator;
  const { createEmulator } = await import("docauto/emulator");
  emulator = createEmulator({
    ...emulatorOptions(),
    deliver: (request) => (deliveryTarget ? deliveryTarget(request) : new Response(null, { status: 204 })),
  });
  stopServing = serve(emulator.url, (input, init) => emulator.fetch(input, init), emulator.WebSocket);
  endpointId = null;
  return emulator;
}

async function resetEmulator() {
  const old = emulator;
  emulator = null;
  stopServing?.();
  stopServing = null;
  endpointId = null;
  await old?.close();
  await pageEmulator();
}

/** A client of the page emulator, for the runner's own calls (the deliveries' endpoint and agent run). */
let runnerClient = null;
async function emulatorClient() {
  const e = await pageEmulator();
  if (runnerClient?.emulator !== e) {
    const { DocAuto } = await import("docauto");
    runnerClient = { emulator: e, client: new DocAuto({ apiKey: e.apiKey, baseUrl: e.url, fetch: e.fetch }) };
  }
  return runnerClient.client;
}

/**
 * Sends the receiver `handler` (a Request in, a Response out) a delivery the page emulator signs: an endpoint for
 * `agent_run.approval_requested`, an agent run that asks for one; then the same signature over a tampered body (it
 * must answer 400 `body_mismatch`) and, with `scenario` "handle", the same delivery again (200, `duplicate: true`).
 */
async function deliveries(handler, scenario, out) {
  const client = await emulatorClient();
  if (!endpointId) {
    const endpoint = await client.webhooks.create({ url: WEBHOOK_URL, events: ["agent_run.approval_requested"] });
    endpointId = endpoint.id;
  }
  let received;
  const delivered = new Promise((resolve, reject) => {
    received = { resolve, reject };
  });
  deliveryTarget = async (request) => {
    deliveryTarget = null;
    const copy = request.clone();
    try {
      const answer = await handler(request);
      received.resolve({ url: request.url, headers: [...copy.headers], body: await copy.text(), status: answer.status, text: await answer.clone().text() });
      return answer;
    } catch (e) {
      received.reject(e);
      throw e;
    }
  };
  out.print(`(the page emulator starts an agent run of agt_invoice_summary that asks for an approval, and signs its delivery to ${WEBHOOK_URL})`, "note");
  const file = await client.files.upload({ name: "invoice.txt", mimeType: "text/plain", data: "Invoice number: INV-2041\nTotal due: 1,284.50 EUR\n" });
  const started = await client.agentRuns.create({ agent: "agt_invoice_summary", files: [{ id: file.id }], webhook: { id: endpointId } }, { wait: 0 });
  // The run moves (and its events go out) as it is read: wait until it asks for the approval.
  await client.agentRuns.waitFor(started.id, { until: "settled", deadlineMs: 30_000 });
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("no delivery came within 30 s")), 30_000);
  });
  delivered.catch(() => {}); // a receiver that threw is reported below, through the race
  const d = await Promise.race([delivered, timeout]).finally(() => {
    clearTimeout(timer);
    deliveryTarget = null;
  });
  const event = JSON.parse(d.body);
  out.verdict(`delivery ${event.eventId} (${event.type}), signed by the emulator: ${d.status} ${d.text}`, d.status >= 200 && d.status < 300);
  const again = (body) => new Request(d.url, { method: "POST", headers: d.headers, body });
  const tampered = d.body.includes('"publish_report"') ? d.body.replace('"publish_report"', '"delete_report"') : `${d.body} `;
  const bad = await handler(again(tampered));
  const badText = await bad.text();
  out.verdict(`the same signature over a tampered body: ${bad.status} ${badText}`, bad.status === 400 && /"error"\s*:\s*"body_mismatch"/.test(badText));
  if (scenario === "handle") {
    const dup = await handler(again(d.body));
    const dupText = await dup.text();
    out.verdict(`the same delivery again: ${dup.status} ${dupText}`, dup.status === 200 && /"duplicate"\s*:\s*true/.test(dupText));
  }
}

// -------------------------------------------------------------------------------------------------------------
// Running a block

const attrsOf = (el) => JSON.parse(el.dataset.attrs ?? "{}");
const codeOf = (el) => el.querySelector("textarea.editor")?.value ?? el.querySelector("pre code").textContent;

let stripper = null;
async function moduleOf(el, code) {
  let js = code;
  if (el.dataset.lang === "ts") {
    stripper ??= import(new URL("assets/ts.js", siteRoot).href);
    js = (await stripper).stripTypes(code);
  }
  const url = URL.createObjectURL(new Blob([`${js}\n//# sourceURL=${el.dataset.file}:${el.dataset.line}`], { type: "text/javascript" }));
  try {
    return await import(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** The environment of a block: the page emulator's address and key unless `env=none`. */
async function environment(el) {
  const attrs = attrsOf(el);
  const env = { PORT: "3000" };
  if (attrs.env !== "none") {
    const e = await pageEmulator();
    Object.assign(env, { DOCAUTO_BASE_URL: e.url, DOCAUTO_API_KEY: e.apiKey });
  }
  globalThis.process.env = env;
  return env;
}

class Output {
  constructor(el) {
    this.el = el;
    this.pre = el.querySelector(".run-output");
    this.pre.textContent = "";
    this.pre.hidden = false;
    this.failed = false;
  }
  print(line, level = "log") {
    const span = document.createElement("span");
    span.className = `line ${level}`;
    span.textContent = `${line}\n`;
    this.pre.append(span);
  }
  verdict(line, ok) {
    if (!ok) this.failed = true;
    this.print(`${ok ? "✔" : "✖"} ${line}`, ok ? "ok" : "fail");
  }
}

async function run(el) {
  const kind = el.dataset.kind;
  const attrs = attrsOf(el);
  const out = new Output(el);
  active = out;
  el.dataset.state = "running";
  const button = el.querySelector("button.run");
  button.disabled = true;
  const started = performance.now();
  const serversBefore = servers.length;
  let keep = false;
  try {
    await environment(el);
    if (kind === "page") {
      keep = true;
      await runPage(el, attrs, out);
    } else {
      const mod = await moduleOf(el, codeOf(el));
      if (kind === "node-test") {
        const result = await runTests((line) => out.print(line, /^✖/.test(line) ? "fail" : "log"));
        if (result.failed || !result.passed) out.failed = true;
      } else if (kind === "node-server") {
        const server = servers[serversBefore];
        if (!server) throw new Error("the example started no server (createServer(...).listen(...))");
        await deliveries((request) => server.handle(request), attrs.deliveries, out);
      } else if (kind === "worker") {
        const worker = mod.default;
        if (typeof worker?.fetch !== "function") throw new Error("the module has no default export with fetch()");
        const env = { DOCAUTO_BASE_URL: globalThis.process.env.DOCAUTO_BASE_URL };
        const ctx = { waitUntil: () => {}, passThroughOnException: () => {} };
        await deliveries((request) => worker.fetch(request, env, ctx), attrs.deliveries, out);
      } else if (kind === "route-handler") {
        const post = mod.POST ?? mod.default?.POST;
        if (typeof post !== "function") throw new Error("the module exports no POST(request)");
        await deliveries((request) => post(request), attrs.deliveries, out);
      }
    }
    if (!keep) out.print(`${out.failed ? "finished with a failure" : "done"} in ${((performance.now() - started) / 1000).toFixed(1)} s`, "note");
    el.dataset.state = out.failed ? "failed" : "done";
  } catch (e) {
    out.print(errorText(e), "error-line");
    el.dataset.state = "failed";
  } finally {
    button.disabled = false;
    if (!keep) for (const server of servers.slice(serversBefore)) server.close();
  }
}

/** A page example: its HTML below the block, its server part started, its module run; the reader clicks on. */
let pageServers = [];
async function runPage(el, attrs, out) {
  for (const s of pageServers) s.close();
  pageServers = [];
  setPageBackend(null);
  if (attrs.server) {
    const backend = document.querySelector(`[data-name="${CSS.escape(attrs.server)}"]`);
    if (!backend) throw new Error(`no server block named ${attrs.server} on this page`);
    const before = servers.length;
    await moduleOf(backend, codeOf(backend));
    const server = servers[before];
    if (!server) throw new Error(`the server part (${attrs.server}) started no server`);
    pageServers.push(server);
    setPageBackend((input, init) => server.handle(new Request(input, init)));
    out.print(`(the server part, ${backend.dataset.file}:${backend.dataset.line}, is running in the page)`, "note");
  }
  const frame = el.querySelector(".page-frame");
  frame.hidden = false;
  frame.innerHTML = attrs.html ? (document.querySelector(`[data-html-name="${CSS.escape(attrs.html)}"] pre code`)?.textContent ?? "") : "";
  await moduleOf(el, codeOf(el));
  out.print(`the page part is loaded: use its buttons above${attrs.click ? ` (${attrs.click})` : ""}`, "note");
}

// -------------------------------------------------------------------------------------------------------------
// The buttons

function button(label, className, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = className;
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

function enhance(el) {
  const bar = document.createElement("div");
  bar.className = "run-bar";
  const edit = button("Edit", "edit", () => {
    const editor = el.querySelector("textarea.editor");
    const pre = el.querySelector("pre");
    if (editor) {
      editor.remove();
      pre.hidden = false;
      edit.textContent = "Edit";
      return;
    }
    const area = document.createElement("textarea");
    area.className = "editor";
    area.spellcheck = false;
    area.value = pre.querySelector("code").textContent;
    area.rows = Math.min(40, area.value.split("\n").length + 1);
    pre.hidden = true;
    pre.after(area);
    area.focus();
    edit.textContent = "Undo edits";
  });
  bar.append(button("Run", "run", () => run(el)), edit);
  if (el.dataset.kind === "page") {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.className = "clip";
    label.append(box, " use the page's sample sound instead of the microphone");
    bar.append(label);
  }
  const output = document.createElement("pre");
  output.className = "run-output";
  output.hidden = true;
  output.setAttribute("aria-live", "polite");
  const frame = document.createElement("div");
  frame.className = "page-frame";
  frame.hidden = true;
  el.append(bar, frame, output);
}

if (examples.length) {
  installRuntime();
  for (const el of examples) enhance(el);
  const note = document.querySelector(".run-note");
  if (note) {
    note.append(" ", button("Reset the emulator", "reset", async () => {
      await resetEmulator();
      note.dataset.resets = String(Number(note.dataset.resets ?? 0) + 1);
    }));
  }
  document.documentElement.dataset.examples = "ready";
}
