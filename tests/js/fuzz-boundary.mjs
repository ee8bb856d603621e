// Fuzz target of the wasm boundary (run by `cargo xtask fuzz`, after the cargo-fuzz targets): the BUILT package in
// Node, driven with random hostile JS values (primitives, lone surrogates, detached buffers and views, lying views,
// throwing getters, Proxies whose traps throw, revoked Proxies, thenables, promises with a throwing `then` or
// `constructor`, Request-likes whose streams answer anything) passed to every entry's methods: WebhookVerifier,
// TestSigner, RealtimeTranscriber, DocAuto. The property: an async method returns a promise (never throws), a sync
// one returns or throws; what rejects or throws is an Error with a string `code` (the entry's own); no wasm trap,
// no uncaught exception, no unhandled rejection; and every 500 calls the same instances still verify, sign and
// transcribe. A failure prints the seed and the call, and exits 1.
//
// Run: node tests/js/fuzz-boundary.mjs [seconds=30] [seed]
import { WebhookVerifier } from "docauto/webhooks";
import { TestSigner } from "docauto/testing";
import { RealtimeTranscriber } from "docauto/realtime";
import { DocAuto } from "docauto";

const seconds = Number(process.argv[2] ?? 30);
const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
let state = seed >>> 0 || 1;
/** mulberry32 */
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
};
const int = (n) => Math.floor(random() * n);
const pick = (items) => items[int(items.length)];

class FuzzError extends Error {}
const fail = (message) => {
  throw new FuzzError(message);
};
const thrown = () => {
  throw Object.assign(new Error("thrown by the fuzzer"), { fromFuzzer: true });
};

// ---- valid material, made with the package's own signer (the boundary, not the crypto, is under test here) ----
const NOW = 1_790_000_000;
const signer = await TestSigner.generate({ now: NOW });
const event = { type: "agent_run.completed", processingId: "agr_1", data: { n: 1 } };
const signed = await signer.sign(event);
const verifier = new WebhookVerifier({ jwks: signer.jwks, now: NOW, dedupe: true, bodyTimeoutMs: 50 });

class FakeSocket {
  constructor() {
    queueMicrotask(() => this.onmessage?.({ data: JSON.stringify({ type: "open", sessionId: "s", sampleRate: 16000 }) }));
  }
  set binaryType(_) {}
  send(data) {
    if (typeof data === "string" && data.includes('"stop"')) queueMicrotask(() => this.onclose?.({ code: 1000, reason: "" }));
  }
  close(code = 1000, reason = "") {
    queueMicrotask(() => this.onclose?.({ code, reason }));
  }
}
const transcriber = new RealtimeTranscriber({ url: "wss://rt.example/s", WebSocket: FakeSocket });

// ---- random hostile values ----
const detach = (buffer) => (structuredClone(buffer, { transfer: [buffer] }), buffer);
function string() {
  const units = [];
  for (let i = int(12); i > 0; i--) units.push(pick([0x41, 0x22, 0x5c, 0, 0xd800, 0xdc00, 0xe9, 0x1f600 & 0xffff, int(0x10000)]));
  return String.fromCharCode(...units);
}
function number() {
  return pick([0, -0, NaN, Infinity, -Infinity, 1e400, Number.MAX_VALUE, 5e-324, 2 ** 53 + 1, -1, 16000, 1.5, random() * 1e9, NOW]);
}
function bytes() {
  const view = new TextEncoder().encode(pick([signed.body, string(), "{}", ""]));
  return pick([
    () => view,
    () => view.buffer,
    () => new DataView(view.buffer),
    () => detach(new ArrayBuffer(8 + int(8))),
    () => {
      const b = new ArrayBuffer(16);
      const v = new Uint8Array(b, int(8), int(8));
      return detach(b) && v;
    },
    () => Object.defineProperty(view, pick(["byteLength", "buffer", "length", "byteOffset"]), { get: thrown }),
    () => ({ byteLength: int(2 ** 31), slice: () => new ArrayBuffer(4), length: int(2 ** 30) }),
    () => new Float32Array(int(64)),
    () => new Int16Array(int(64)),
    () => Object.defineProperty(new Float32Array(8), "length", { value: 2 ** 30 }),
    () => ({ [Symbol.toStringTag]: pick(["Float32Array", "Int16Array"]), length: int(2 ** 30) }),
    () => (typeof SharedArrayBuffer === "function" ? new Uint8Array(new SharedArrayBuffer(8)) : view),
  ])();
}
function trapping(target) {
  const handler = {};
  for (const trap of ["get", "has", "ownKeys", "getOwnPropertyDescriptor", "getPrototypeOf", "set", "defineProperty", "deleteProperty", "apply", "construct"]) {
    if (random() < 0.5) handler[trap] = thrown;
  }
  return new Proxy(target, handler);
}
/** A promise of the fuzzer's, marked handled: its rejection is not the package's unhandled rejection. */
const handled = (p) => (p.catch(() => {}), p);
function thenable(depth) {
  return pick([
    () => ({ get then() { return thrown(); } }),
    () => ({ then: thrown }),
    () => ({ then: (resolve) => resolve(value(depth)) }),
    () => Object.defineProperty(handled(new Promise((r) => r(value(depth)))), "then", { get: thrown }),
    () => Object.defineProperty(handled(new Promise((r) => r(value(depth)))), "constructor", { get: thrown }),
    () => handled(Promise.reject(value(depth))),
    () => handled(new Promise((r) => r(value(depth)))),
  ])();
}
function reader(depth) {
  let reads = int(4);
  return {
    read: pick([
      () => thrown,
      () => () => value(depth),
      () => () => thenable(depth),
      () => () => Promise.resolve(reads-- > 0 ? { done: false, value: bytes() } : { done: true }),
      () => () => Promise.resolve({ get done() { return thrown(); } }),
    ])(),
    cancel: pick([() => {}, thrown, () => thenable(depth)]),
  };
}
function request(depth) {
  const header = pick([signed.signature, string(), null, { length: 2 ** 30, charCodeAt: () => 65 }, undefined]);
  return pick([
    () => ({ headers: { get: (n) => (n === "x-svc-signature" ? header : pick([null, "12", value(depth)])) }, body: { getReader: () => reader(depth) } }),
    () => ({ headers: { get: thrown }, body: null }),
    () => ({ headers: { get: () => signed.signature }, body: undefined, arrayBuffer: pick([() => thenable(depth), bytes, thrown]) }),
    () => ({ headers: { get: () => signed.signature }, body: { getReader: () => trapping({}) } }),
    () => trapping({ headers: { get: () => signed.signature } }),
  ])();
}
function object(depth) {
  const o = {};
  for (let i = int(4); i > 0; i--) {
    const name = pick(["jwks", "jwksUrl", "now", "fetch", "dedupe", "timeoutMs", "bodyTimeoutMs", "kid", "privateJwk", "url", "getUrl", "WebSocket", "type", "processingId", "data", "eventId", "stream", "microphone", "apiKey", "baseUrl", string()]);
    const member = random() < 0.3 ? { get: thrown } : { value: value(depth), writable: true };
    Object.defineProperty(o, name, { ...member, enumerable: true, configurable: true });
  }
  return o;
}
/** A random value; one whose making threw (a Proxy trap the fuzzer itself touched) is made again. */
function value(depth = 2) {
  for (;;) {
    try {
      return anyValue(depth);
    } catch {
      // made again
    }
  }
}
function anyValue(depth) {
  const d = depth - 1;
  const kinds = [
    () => pick([undefined, null, true, false]),
    number,
    string,
    () => Symbol("s"),
    () => 10n,
    bytes,
    () => signed.body,
    () => signed.signature,
  ];
  if (d >= 0) {
    kinds.push(
      () => object(d),
      () => trapping(object(d)),
      () => trapping(function () {}),
      () => {
        const r = Proxy.revocable({}, {});
        r.revoke();
        return r.proxy;
      },
      () => thenable(d),
      () => pick([thrown, () => value(d), () => thenable(d)]),
      () => [value(d), value(d)],
      () => request(d),
      () => ({ toString: thrown, valueOf: thrown, toJSON: thrown }),
    );
  }
  return pick(kinds)();
}

// ---- the calls ----
const ASYNC = [
  ["verify", (a, b) => verifier.verify(a, b)],
  ["verify(body, ?)", (a) => verifier.verify(signed.body, a)],
  ["verify(?, signature)", (a) => verifier.verify(a, signed.signature)],
  ["verifyRequest", (a) => verifier.verifyRequest(a)],
  ["verifyRequest(request)", () => verifier.verifyRequest(request(2))],
  ["markProcessed", (a) => verifier.markProcessed(a)],
  ["releaseClaim", (a) => verifier.releaseClaim(a)],
  ["TestSigner.generate", (a) => TestSigner.generate(a)],
  ["sign", (a) => signer.sign(a)],
  ["sign({...event, ?})", (a) => signer.sign({ ...event, ...(a && typeof a === "object" ? { data: a } : { type: a }) })],
  ["request", (a, b) => signer.request(a, b)],
  ["transcriber.start", (a) => transcriber.start(a)],
];
const SYNC = [
  ["verifySync", (a, b) => verifier.verifySync(a, b)],
  ["verifySync(?, signature)", (a) => verifier.verifySync(a, signed.signature)],
  ["new WebhookVerifier", (a) => new WebhookVerifier(a)],
  ["new WebhookVerifier({ jwks, now, ?: ? })", (a) => new WebhookVerifier({ jwks: signer.jwks, now: NOW, [pick(["fetch", "dedupe", "now", "bodyTimeoutMs", "maxBodyBytes"])]: a })],
  ["new RealtimeTranscriber", (a) => new RealtimeTranscriber(a)],
  ["sendAudio", (a, b) => transcriber.sendAudio(a, b)],
  ["sendAudio(?, 16000)", (a) => transcriber.sendAudio(a, 16000)],
  ["new DocAuto", (a) => new DocAuto(a)],
];

/** Whether `e` is an acceptable refusal: an Error with a string code (or one the fuzzer threw, passed on by a store). */
const acceptable = (e) => (e instanceof Error && typeof e.code === "string" && !(e instanceof WebAssembly.RuntimeError)) || e?.fromFuzzer === true;
const describe = (e) => `${e?.name}: ${e?.message}${e?.code ? ` (${e.code})` : ""}`;

let unexpected;
process.on("uncaughtException", (e) => (unexpected ??= `uncaught exception: ${describe(e)}`));
process.on("unhandledRejection", (e) => (unexpected ??= `unhandled rejection: ${describe(e)}`));

async function healthy() {
  const again = await signer.sign(event);
  const verified = await verifier.verify(again.body, again.signature);
  if (verified.type !== event.type) fail("the verifier no longer verifies a valid event");
  verifier.verifySync(again.body, again.signature);
  if (typeof transcriber.state !== "string") fail("the transcriber no longer answers");
}

const until = performance.now() + seconds * 1000;
let calls = 0;
let last = "";
try {
  while (performance.now() < until && !unexpected) {
    for (let i = 0; i < 500; i++) {
      calls++;
      const [a, b] = [value(), value()];
      if (random() < 0.6) {
        const [name, f] = pick(ASYNC);
        last = name;
        let p;
        try {
          p = f(a, b);
        } catch (e) {
          fail(`${name} threw synchronously: ${describe(e)}`);
        }
        if (!(p instanceof Promise)) fail(`${name} returned ${typeof p}, not a promise`);
        await p.then(
          () => {},
          (e) => acceptable(e) || fail(`${name} rejected with ${describe(e)}`),
        );
      } else {
        const [name, f] = pick(SYNC);
        last = name;
        try {
          const made = f(a, b);
          made?.free?.();
        } catch (e) {
          if (e instanceof FuzzError) throw e;
          if (!acceptable(e)) fail(`${name} threw ${describe(e)}`);
        }
      }
    }
    await healthy();
    await new Promise((r) => setTimeout(r, 0));
  }
  if (unexpected) fail(`${unexpected} (near ${last})`);
  await healthy();
  await transcriber.stop();
  console.log(`fuzz boundary: ${calls} calls in ${seconds} s, seed ${seed}: no failure`);
} catch (e) {
  console.log(`fuzz boundary: FAILED after ${calls} calls, seed ${seed} (rerun: node tests/js/fuzz-boundary.mjs ${seconds} ${seed}): ${e.message}`);
  process.exit(1);
}
process.exit(0);
