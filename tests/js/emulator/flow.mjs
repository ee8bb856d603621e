// The full flow every runtime runs against `docauto/emulator`: a file uploaded until `ready`, an extract run waited
// until `processed` through `DocAuto`, its signed webhook delivered to a local receiver and verified by
// `docauto/webhooks` against the emulator's key set (a tampered body refused), then `close()`. In-process, also: the
// deliveries handed to the test's own handler (`deliver`) and verified there with the key set fetched through
// `emulator.fetch`, and realtime sessions over `emulator.WebSocket` (a hand-written client and `RealtimeTranscriber`).
// Runtime-neutral: the caller hands in the modules, the emulator and the receiver. Returns `{ passed, failed }`; `log`
// gets one line a check.

import { sendTone } from "../realtime/tone.mjs";

const INVOICE = "ACME Corporation\nInvoice Number: INV-2041\nInvoice Date: 2026-03-14\nTotal Amount: 1,250.50 EUR\n";
const SCHEMA = {
  type: "object",
  properties: {
    invoiceNumber: { type: "string", description: "Invoice Number" },
    totalAmount: { type: "string", description: "Total Amount" },
  },
};

export function checker(label, log) {
  const tally = { passed: 0, failed: 0 };
  const check = (name, ok, detail = "") => {
    if (ok) tally.passed++;
    else tally.failed++;
    log(`${ok ? "ok  " : "FAIL"} ${label}: ${name}${ok || !detail ? "" : ` (${detail})`}`);
  };
  return { tally, check };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The driver's receiver (receiver.mjs, at `base`) seen from another runtime: delivered to and read with its `fetch`. */
export function remoteReceiver(base) {
  return { url: `${base}/hook`, hits: async () => (await fetch(`${base}/hits`)).json() };
}

/** Where nothing can listen (a page, a Worker, an edge function): `startEmulator` rejects with `listen_unavailable`. */
export async function checkListenRefused(startEmulator, check) {
  let refused;
  try {
    await startEmulator();
  } catch (e) {
    refused = e;
  }
  check("startEmulator rejects with listen_unavailable", refused?.code === "listen_unavailable", String(refused));
}

/**
 * `mods`: `{ DocAuto, WebhookVerifier, WebhookVerificationError }`; `client`: the options for `DocAuto` (apiKey,
 * baseUrl and, in-process, fetch); `receiver`: `{ url, hits() }` (hits: the deliveries so far, `{ body, signature }`).
 */
export async function runFlow(mods, client, receiver, check) {
  const api = new mods.DocAuto({ ...client, logLevel: "off" });
  try {
    const file = await api.files.upload({ name: "invoice.txt", mimeType: "text/plain", data: new TextEncoder().encode(INVOICE) });
    check("file uploaded and ready", file.status === "ready" && /^file_/.test(file.id), JSON.stringify(file));

    const created = await api.extract({ file: { id: file.id }, schema: SCHEMA, webhook: { url: receiver.url } }, { wait: 0 });
    const run = await api.runs.waitFor(created.id);
    check("extract run processed", run.status === "processed", JSON.stringify(run).slice(0, 300));
    check(
      "extracted fields",
      run.output?.value?.invoiceNumber === "INV-2041" && run.output?.value?.totalAmount === "1,250.50 EUR",
      JSON.stringify(run.output).slice(0, 300),
    );

    let hit;
    for (let i = 0; i < 200 && !hit; i++) {
      hit = (await receiver.hits()).find((h) => h.body.includes(created.id) && h.body.includes('"run.completed"'));
      if (!hit) await sleep(25);
    }
    check("signed run.completed delivered to the receiver", Boolean(hit));
    if (hit) {
      const jwks = await api.webhooks.jwks();
      const verifier = new mods.WebhookVerifier({ jwks });
      const event = await verifier.verify(hit.body, hit.signature);
      check("WebhookVerifier verifies the delivery with the emulator's key set", event.type === "run.completed" && event.processingId === created.id, JSON.stringify(event).slice(0, 200));
      let refused;
      try {
        await verifier.verify(hit.body.replace('"status":"processed"', '"status":"failed"'), hit.signature);
      } catch (e) {
        refused = e;
      }
      check("a tampered delivery is refused", refused instanceof mods.WebhookVerificationError, String(refused));
    }
  } catch (e) {
    check("flow ran without an error", false, `${e?.name}: ${e?.message} ${e?.code ?? ""}`);
  }
}

const until = async (what, ms = 5000) => {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) {
    const v = await what();
    if (v) return v;
  }
  return undefined;
};

/**
 * `createEmulator({ deliver })`: every webhook delivery goes to the test's own handler (a `Request` in, a `Response`
 * out) instead of the network, so an endpoint on any host works (`https://receiver.test/hooks`). The handler verifies
 * as production code does, with `WebhookVerifier({ baseUrl: emulator.url, fetch: emulator.fetch })` (the in-process
 * origin is https, so the verifier takes it). It throws at the first attempt and answers 500 at the second: the
 * capability ladder retries (100 and 200 ms at timeScale 0.01), and the deliveries log shows 0, 500, 200.
 */
export async function runDelivered(mods, createEmulator, check, extra = {}) {
  const seen = [];
  const verified = [];
  let verifier;
  const deliver = async (request) => {
    const body = new Uint8Array(await request.arrayBuffer());
    const signature = request.headers.get("x-svc-signature");
    seen.push({ url: request.url, method: request.method, type: request.headers.get("content-type"), signature, body });
    if (seen.length === 1) throw new Error("the handler failed");
    if (seen.length === 2) return new Response("not now", { status: 500 });
    try {
      const event = await verifier.verify(body, signature);
      verified.push(event);
      return Response.json({ received: event.eventId });
    } catch (e) {
      return Response.json({ error: e.code ?? String(e) }, { status: 400 });
    }
  };
  const emu = createEmulator({ timeScale: 0.01, deliver });
  try {
    check("the in-process origin is https (a WebhookVerifier takes it)", emu.url === "https://emulator.test", emu.url);
    try {
      verifier = new mods.WebhookVerifier({ baseUrl: emu.url, fetch: emu.fetch });
    } catch (e) {
      check("WebhookVerifier({ baseUrl: emulator.url, fetch: emulator.fetch }) is accepted", false, `${e.code}: ${e.message}`);
      return;
    }
    const api = new mods.DocAuto({ apiKey: emu.apiKey, baseUrl: emu.url, fetch: emu.fetch, logLevel: "off", ...extra });
    const endpoint = await api.webhooks.create({ url: "https://receiver.test/hooks", events: ["run.completed"] });
    const file = await api.files.upload({ name: "invoice.txt", mimeType: "text/plain", data: new TextEncoder().encode(INVOICE) });
    const run = await api.extract({ file: { id: file.id }, schema: SCHEMA, webhook: { id: endpoint.id } }, { wait: 0 });
    await api.runs.waitFor(run.id);
    const event = await until(() => verified.find((e) => e.processingId === run.id));
    check(
      "deliver: the handler verifies run.completed with the emulator's key set (fetched through emulator.fetch)",
      event?.type === "run.completed" && event.data?.status === "processed",
      JSON.stringify({ verified, seen: seen.length }).slice(0, 300),
    );
    const first = seen[0];
    check(
      "deliver: a POST of JSON to the endpoint's URL, signed in x-svc-signature",
      seen.length === 3 && seen.every((d) => d.url === "https://receiver.test/hooks" && d.method === "POST" && d.type === "application/json" && d.signature?.split(".").length === 3),
      JSON.stringify(seen.map((d) => [d.url, d.method, d.type])),
    );
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    check("deliver: every attempt carries the same envelope bytes", seen.length === 3 && seen.every((d) => same(d.body, first.body)));
    const log = await until(async () => {
      const rows = (await api.webhooks.deliveries(endpoint.id)).data;
      return rows.length === 3 ? rows : undefined;
    });
    check(
      "deliver: a throw and a 500 are failed attempts retried on the ladder; the log shows 0, 500, 200",
      JSON.stringify(log?.map((r) => [r.attempt, r.responseStatus, r.ok])) === JSON.stringify([[3, 200, true], [2, 500, false], [1, 0, false]]),
      JSON.stringify(log),
    );
    let refused;
    try {
      const tampered = new TextDecoder().decode(first.body).replace('"status":"processed"', '"status":"failed"');
      await verifier.verify(tampered, seen[2].signature);
    } catch (e) {
      refused = e;
    }
    check("deliver: a tampered copy is refused by the handler's verifier", refused instanceof mods.WebhookVerificationError, String(refused));
  } catch (e) {
    check("the deliver flow ran without an error", false, `${e?.name}: ${e?.message} ${e?.code ?? ""}`);
  } finally {
    await emu.close();
  }
}

/** `seconds` of a loud 440 Hz tone then `silence` seconds of silence, PCM16 at 16 kHz. */
function tone16k(seconds, silence = 0) {
  const pcm = new Int16Array(Math.round(16000 * (seconds + silence)));
  for (let i = 0; i < 16000 * seconds; i++) pcm[i] = Math.round(Math.sin((i * 440 * 2 * Math.PI) / 16000) * 12000);
  return pcm;
}

/** Opens `new WebSocketImpl(url)`, runs `onOpen(ws)` at the service's `open`; resolves at close with what happened. */
function session(WebSocketImpl, url, onOpen, ms = 10_000) {
  return new Promise((resolve) => {
    const got = { events: [], messages: [], states: [] };
    const ws = new WebSocketImpl(url);
    got.states.push(ws.readyState);
    ws.binaryType = "arraybuffer";
    const timer = setTimeout(() => resolve({ ...got, timedOut: true }), ms);
    ws.addEventListener("open", () => {
      got.events.push("open");
      got.states.push(ws.readyState);
    });
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data);
      got.messages.push(m);
      if (m.type === "open") onOpen(ws);
    };
    ws.onerror = () => got.events.push("error");
    ws.onclose = (e) => {
      clearTimeout(timer);
      got.events.push("close");
      got.states.push(ws.readyState);
      resolve({ ...got, code: e.code, reason: e.reason, wasClean: e.wasClean });
    };
  });
}

/**
 * `emulator.WebSocket`: the realtime route in-process, with the browser WebSocket interface. A hand-written client
 * (events, `on*` handlers, readyState, binary frames, `stop`), the ticket used twice, the idle limit scaled by
 * `timeScale`, a whole `RealtimeTranscriber` session (partials, finals, usage, close) and `close()` of the emulator
 * under an open socket.
 */
export async function runSockets(mods, createEmulator, check, extra = {}) {
  const emu = createEmulator();
  const fast = createEmulator({ timeScale: 0.01 });
  try {
    const api = new mods.DocAuto({ apiKey: emu.apiKey, baseUrl: emu.url, fetch: emu.fetch, logLevel: "off", ...extra });
    const s1 = await api.realtime.createSession({ sampleRate: 16000 });
    check("a session's URL is the in-process origin's wss://", s1.url.startsWith("wss://emulator.test/v1/realtime/socket?ticket="), s1.url.split("?")[0]);
    const one = await session(emu.WebSocket, s1.url, (ws) => {
      ws.send(tone16k(1).buffer);
      ws.send(JSON.stringify({ type: "stop" }));
    });
    const types = one.messages.map((m) => m.type);
    check(
      "emulator.WebSocket: open, then open, final, usage, close 1000 (clean); readyState 0, 1, 3",
      JSON.stringify(types) === JSON.stringify(["open", "final", "usage"]) && one.code === 1000 && one.wasClean === true &&
        JSON.stringify(one.events) === JSON.stringify(["open", "close"]) && JSON.stringify(one.states) === JSON.stringify([0, 1, 3]),
      JSON.stringify(one),
    );
    const final = one.messages.find((m) => m.type === "final");
    check("emulator.WebSocket: the final describes the second of tone", /^\[speech 1\.0 s, -\d+ dBFS\]$/.test(final?.text ?? ""), JSON.stringify(final));
    const again = await session(emu.WebSocket, s1.url, () => {});
    check(
      "emulator.WebSocket: a ticket is single use (ticket_used, close 4401)",
      again.messages[0]?.code === "ticket_used" && again.code === 4401,
      JSON.stringify(again),
    );
    const wrong = await session(emu.WebSocket, "wss://emulator.test/v1/elsewhere", () => {});
    check("emulator.WebSocket: another path fails like a refused upgrade (error, close 1006)", JSON.stringify(wrong.events) === JSON.stringify(["error", "close"]) && wrong.code === 1006, JSON.stringify(wrong));

    const fastApi = new mods.DocAuto({ apiKey: fast.apiKey, baseUrl: fast.url, fetch: fast.fetch, logLevel: "off", ...extra });
    const idle = await fastApi.realtime.createSession({});
    const t0 = Date.now();
    const quiet = await session(fast.WebSocket, idle.url, () => {}, 5000);
    const waited = Date.now() - t0;
    check(
      "emulator.WebSocket: the 30 s idle limit is scaled by timeScale (0.01: closed 4408 within a second)",
      quiet.code === 4408 && quiet.messages.at(-1)?.code === "idle_timeout" && waited >= 250 && waited < 1500,
      `${waited} ms ${JSON.stringify(quiet)}`,
    );

    const s2 = await api.realtime.createSession({});
    const t = new mods.RealtimeTranscriber({
      url: s2.url,
      getUrl: async () => (await api.realtime.createSession({})).url,
      WebSocket: emu.WebSocket,
      frameMs: 20,
    });
    const events = [];
    for (const k of ["open", "partial", "final", "usage", "error", "close"]) {
      t.addEventListener(k, (e) => events.push({ type: k, text: e.detail?.text, code: e.detail?.code }));
    }
    await t.start({ microphone: false });
    sendTone(t);
    await t.stop();
    const kinds = events.map((e) => e.type);
    check(
      "RealtimeTranscriber over emulator.WebSocket: open, a partial, a final with text, usage, close",
      kinds[0] === "open" && kinds.includes("partial") && kinds.at(-1) === "close" && !kinds.includes("error") &&
        /^\[speech 3\.0 s/.test(events.find((e) => e.type === "final")?.text ?? ""),
      JSON.stringify(events),
    );
    check("RealtimeTranscriber over emulator.WebSocket: usage of one started minute, 7 credits", JSON.stringify(t.usage) === JSON.stringify({ startedMinutes: 1, credits: 7 }), JSON.stringify(t.usage));
    const read = await emu.fetch(`${emu.url}/v1/realtime/transcriptions/${s2.id}`, { headers: { authorization: `Bearer ${emu.apiKey}` } });
    const state = (await read.json()).status;
    check("the transcriber's session is closed on the service", state === "closed", String(state));

    const s3 = await api.realtime.createSession({});
    const dropped = session(emu.WebSocket, s3.url, () => emu.close());
    const gone = await dropped;
    check("close() of the emulator ends an open socket like a dropped connection (1006, not clean)", gone.code === 1006 && gone.wasClean === false, JSON.stringify(gone));
  } catch (e) {
    check("the socket flow ran without an error", false, `${e?.name}: ${e?.message} ${e?.code ?? ""}`);
  } finally {
    await emu.close();
    await fast.close();
  }
}

/**
 * The `drop_connection` fault: the request is handled (the webhook endpoint exists afterwards), then the answer is
 * cut; `fetch` rejects (a network error) instead of resolving.
 */
async function dropped(doFetch, base, key, check) {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  await (await doFetch(`${base}/__emulator/faults`, { method: "POST", headers, body: JSON.stringify({ kind: "drop_connection" }) })).arrayBuffer();
  let error;
  try {
    const r = await doFetch(`${base}/v1/webhooks`, { method: "POST", headers, body: JSON.stringify({ url: "https://hooks.example/dropped" }) });
    await r.arrayBuffer();
  } catch (e) {
    error = e;
  }
  const list = await (await doFetch(`${base}/v1/webhooks`, { headers })).json();
  check(
    "drop_connection: the answer is cut (fetch rejects) after the change was made",
    error instanceof TypeError && list.data.some((w) => w.url === "https://hooks.example/dropped"),
    `${error} / ${JSON.stringify(list).slice(0, 200)}`,
  );
}

/**
 * The in-process emulator: the flow, the socket route's clear refusal, and the state of a closed emulator. `extra`:
 * more `DocAuto` options (a page passes `dangerouslyAllowBrowser`: the emulator's key is a test key).
 */
export async function runInProcess(mods, createEmulator, receiver, check, extra = {}) {
  await runDelivered(mods, createEmulator, check, extra);
  await runSockets(mods, createEmulator, check, extra);
  const emu = createEmulator({ timeScale: 0.01, allowHttpWebhooks: true, control: true });
  check("apiKey is the first accepted key", emu.apiKey === "sk_test_docauto");
  await runFlow(mods, { apiKey: emu.apiKey, baseUrl: emu.url, fetch: emu.fetch, ...extra }, receiver, check);

  await dropped(emu.fetch, emu.url, emu.apiKey, check);

  const socket = await emu.fetch(`${emu.url}/v1/realtime/socket?ticket=x`);
  const body = await socket.json();
  check(
    "a plain fetch of the socket route answers 426 naming emulator.WebSocket",
    socket.status === 426 && body.code === "websocket_unavailable" && body.message.includes("emulator.WebSocket"),
    JSON.stringify(body),
  );

  const snapshot = JSON.parse(emu.snapshot());
  check("snapshot() holds the run", Object.keys(snapshot.runs ?? {}).some((id) => id.startsWith("exr_")), Object.keys(snapshot).join());
  const again = createEmulator({ snapshot: emu.snapshot() });
  const runs = await (await again.fetch(`${emu.url}/v1/runs`, { headers: { authorization: `Bearer ${again.apiKey}` } })).json();
  check("createEmulator({ snapshot }) starts from it", runs.data?.length === 1, JSON.stringify(runs).slice(0, 200));
  await again.close();

  await emu.close();
  let closed;
  try {
    await emu.fetch(`${emu.url}/v1/agents`);
  } catch (e) {
    closed = e;
  }
  check("fetch after close() rejects with emulator_closed", closed?.code === "emulator_closed", String(closed));

  let bad;
  try {
    createEmulator({ rateLimit: 0 });
  } catch (e) {
    bad = e;
  }
  check("a bad option throws invalid_options", bad?.code === "invalid_options" && /rateLimit/.test(bad.message), String(bad));

  let path;
  try {
    createEmulator({ baseUrl: "http://emulator.test/api" });
  } catch (e) {
    path = e;
  }
  check("a baseUrl with a path throws invalid_options", path?.code === "invalid_options" && /baseUrl/.test(path.message), String(path));
  const slash = createEmulator({ baseUrl: "http://other.test/" });
  const registered = await (
    await slash.fetch("http://other.test/v1/files", {
      method: "POST",
      headers: { authorization: `Bearer ${slash.apiKey}` },
      body: JSON.stringify({ name: "a.txt", mimeType: "text/plain" }),
    })
  ).json();
  check(
    "a baseUrl's trailing slash is dropped (the upload address routes)",
    slash.url === "http://other.test" && registered.uploadUrl?.startsWith("http://other.test/uploads/"),
    JSON.stringify(registered),
  );
  await slash.close();
}

/**
 * The listening emulator: the flow over real HTTP, then the realtime socket (`WebSocket`: the runtime's own, or
 * `ws` in Node 20).
 */
export async function runListening(mods, startEmulator, WebSocketImpl, receiver, check) {
  const emu = await startEmulator({ timeScale: 0.01, allowHttpWebhooks: true, control: true });
  check("startEmulator listens on 127.0.0.1", /^http:\/\/127\.0\.0\.1:\d+$/.test(emu.url), emu.url);
  try {
    await runFlow(mods, { apiKey: emu.apiKey, baseUrl: emu.url }, receiver, check);
    await dropped(fetch, emu.url, emu.apiKey, check);
    const api = new mods.DocAuto({ apiKey: emu.apiKey, baseUrl: emu.url, logLevel: "off" });
    const session = await api.realtime.createSession({ sampleRate: 16000 });
    const frames = await new Promise((resolve, reject) => {
      const got = [];
      const ws = new WebSocketImpl(session.url);
      ws.binaryType = "arraybuffer";
      const timer = setTimeout(() => reject(new Error(`socket: no close after ${JSON.stringify(got)}`)), 10_000);
      ws.onmessage = (e) => {
        const m = JSON.parse(String(e.data));
        got.push(m.type);
        if (m.type === "open") {
          // one second of a loud tone, then stop: a final, then usage, then close 1000
          const pcm = new Int16Array(16000);
          for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(Math.sin((i * 440 * 2 * Math.PI) / 16000) * 12000);
          ws.send(pcm.buffer);
          ws.send(JSON.stringify({ type: "stop" }));
        }
      };
      ws.onclose = (e) => {
        clearTimeout(timer);
        resolve({ got, code: e.code });
      };
      ws.onerror = () => {};
    });
    check(
      "realtime socket: open, final, usage, close 1000",
      JSON.stringify(frames.got) === JSON.stringify(["open", "final", "usage"]) && frames.code === 1000,
      JSON.stringify(frames),
    );
  } catch (e) {
    check("listening flow ran without an error", false, `${e?.name}: ${e?.message}`);
  } finally {
    await emu.close();
  }
  // `deliver` on a listening emulator too: the delivery goes to the handler, not over the network
  const got = [];
  const listening = await startEmulator({ timeScale: 0.01, deliver: (request) => (got.push(request.url), new Response(null, { status: 204 })) });
  try {
    const api = new mods.DocAuto({ apiKey: listening.apiKey, baseUrl: listening.url, logLevel: "off" });
    const file = await api.files.upload({ name: "a.txt", mimeType: "text/plain", data: new TextEncoder().encode(INVOICE) });
    const run = await api.parse({ file: { id: file.id }, webhook: { url: "https://receiver.test/listening" } }, { wait: 0 });
    await api.runs.waitFor(run.id);
    await until(() => got.length > 0);
    check("startEmulator({ deliver }): the delivery goes to the handler", got[0] === "https://receiver.test/listening", JSON.stringify(got));
  } catch (e) {
    check("startEmulator({ deliver }) ran without an error", false, `${e?.name}: ${e?.message}`);
  } finally {
    await listening.close();
  }
}
