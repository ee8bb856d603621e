// The wasm boundary under hostile JS values, against the BUILT package in Node: objects the application
// hands over that throw when touched (getters, Proxies, revoked Proxies, detached buffers, streams whose read()
// answers anything but a promise, thenables whose `then` throws, stalled streams, clocks that call back in). A JS
// exception that unwinds through Rust frames skips their destructors and wasm's stack-pointer restore: after a few
// thousand of them every later call of the instance fails with `memory access out of bounds`, or the process exits.
// So: 20 000+ hostile calls at ONE verifier, each refused with the entry's own error and stable code (an async method
// always rejects, never throws), then a valid token still verifies, in the same instance, at the same speed.
// Tokens are minted with jose (an oracle that shares nothing with the verifier); numbers are checked against
// JSON.parse. Prints `RESULT {...}` lines for cargo xtask test.
//
// Run: node tests/js/boundary.mjs (after cargo xtask build).
import { WebhookVerifier } from "docauto/webhooks";
import { TestSigner } from "docauto/testing";
import { RealtimeTranscriber } from "docauto/realtime";
import { DocAuto } from "docauto";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { report } from "./common.mjs";
import { Checks, assert } from "./suite.mjs";

const NOW = 1_790_000_000;
const HOSTILE_CALLS = 21_000;
const checks = new Checks((line) => console.log(line));

// ---- tokens, minted with jose ----
const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
const jwks = { keys: [jwk] };
const sha = (text) => createHash("sha256").update(text).digest("base64url");
let serial = 0;
async function mint(claims = {}, kid = "k1") {
  const eventId = `evt_${++serial}`;
  const envelope = { eventId, type: "agent_run.completed", processingId: "agr_1", occurredAt: "2026-09-21T12:00:00.000Z", data: {} };
  const body = JSON.stringify(envelope);
  const payload = { iss: "svc-process", processingId: "agr_1", eventId, type: envelope.type, bodySha256: sha(body), iat: NOW - 10, exp: NOW + 290, ...claims };
  const token = await new SignJWT(payload).setProtectedHeader({ alg: "ES256", kid }).sign(privateKey);
  return { body, token, eventId };
}
/** A token whose claims JSON is written by hand, so a number keeps its exact text (`1e400`, 17 digits). */
async function mintRaw(claimsJson) {
  const b64 = (s) => Buffer.from(s).toString("base64url");
  const header = b64(JSON.stringify({ alg: "ES256", kid: "k1" }));
  const input = `${header}.${b64(claimsJson)}`;
  const { webcrypto } = await import("node:crypto");
  const key = await webcrypto.subtle.importKey("jwk", await exportJWK(privateKey), { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  const sig = await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, new TextEncoder().encode(input));
  return `${input}.${Buffer.from(sig).toString("base64url")}`;
}

// ---- hostile values ----
const hostile = () => {
  throw new Error("hostile");
};
const traps = (target) =>
  new Proxy(target, {
    get: hostile, has: hostile, ownKeys: hostile, getOwnPropertyDescriptor: hostile, getPrototypeOf: hostile,
    set: hostile, defineProperty: hostile, deleteProperty: hostile, apply: hostile, construct: hostile,
  });
/** A Proxy of an object (or of a function) whose every trap throws. */
const trapAll = () => traps({});
const trapAllFn = () => traps(function () {});
const revoked = () => {
  const r = Proxy.revocable({}, {});
  r.revoke();
  return r.proxy;
};
const withGetterThrowing = (object, name) => Object.defineProperty(object, name, { get: hostile, enumerable: true });
const getterThrows = (...names) => Object.defineProperties({}, Object.fromEntries(names.map((n) => [n, { get: hostile, enumerable: true }])));
const detach = (buffer) => structuredClone(buffer, { transfer: [buffer] }) && buffer;
const detachedBuffer = () => detach(new ArrayBuffer(64));
const detachedView = () => {
  const b = new ArrayBuffer(64);
  const v = new Uint8Array(b, 8, 16);
  detach(b);
  return v;
};
/** A real view whose properties lie or throw: the bytes are read from its buffer, not from what it claims. */
const lyingView = (text) => {
  const v = new TextEncoder().encode(text);
  for (const name of ["buffer", "byteOffset", "byteLength", "length"]) Object.defineProperty(v, name, { get: hostile });
  return v;
};
/** An object that only claims to be an ArrayBuffer (a numeric byteLength and a slice method) and a huge array. */
const fakeBuffer = () => ({ byteLength: 8, slice: () => new ArrayBuffer(8), length: 2 ** 30, 0: 1 });
const thenThrows = () => ({ get then() { throw new Error("hostile"); } });
const promiseThenThrows = (value) => Object.defineProperty(Promise.resolve(value), "then", { get: hostile });
const promiseCtorThrows = (value) => Object.defineProperty(Promise.resolve(value), "constructor", { get: hostile });

/** A Request-like object: `headers.get` and a `body` stream whose reader is `reader`. */
function request(token, reader, extra = {}) {
  return {
    headers: { get: (name) => (name === "x-svc-signature" ? token : null) },
    body: { getReader: () => reader },
    ...extra,
  };
}
const readerAnswering = (answer) => ({ read: () => answer(), cancel: () => Promise.resolve() });

// ---- helpers ----
/** Calls an async method: it must return a promise (never throw) that rejects with an Error of one of `codes`. */
async function rejects(what, f, codes) {
  let p;
  try {
    p = f();
  } catch (e) {
    throw new Error(`${what}: threw synchronously (${e?.name}: ${e?.message})`);
  }
  assert(p && typeof p.then === "function", `${what}: did not return a promise`);
  try {
    await p;
  } catch (e) {
    assert(e instanceof Error, `${what}: rejected with a non-Error ${String(e)}`);
    assert(codes.includes(e.code), `${what}: rejected with code ${e.code} (${e.name}: ${e.message}), expected ${codes}`);
    return e;
  }
  throw new Error(`${what}: resolved`);
}
/** Calls a sync method: it must throw an Error of one of `codes`. */
function throws(what, f, codes) {
  try {
    f();
  } catch (e) {
    assert(e instanceof Error && codes.includes(e.code), `${what}: threw code ${e?.code} (${e?.name}: ${e?.message}), expected ${codes}`);
    return e;
  }
  throw new Error(`${what}: did not throw`);
}
const timed = (ms, p, what) =>
  Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms))]);

/** Best of `rounds` rounds of `n` verifications, in verifications per second. */
async function speed(v, body, token, n = 400, rounds = 7) {
  let best = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      v.verifySync(body, token);
      await v.verify(body, token);
    }
    best = Math.max(best, (2 * n * 1000) / (performance.now() - t0));
  }
  return best;
}

// ---- the one verifier every hostile call goes to ----
const good = await mint();
const v = new WebhookVerifier({ jwks, now: NOW, dedupe: true });
// Warm up (key imported, code paths compiled), then the speed to compare with afterwards.
await speed(v, good.body, good.token, 200, 2);
const before = await speed(v, good.body, good.token);

// The default read deadline (a few seconds) is checked alongside: a stalled stream started now must end by itself.
const stalledSince = performance.now();
const stalledReader = { read: () => new Promise(() => {}), cancelled: 0, cancel() { this.cancelled++; return Promise.resolve(); } };
const defaultDeadline = rejects("verifyRequest(stalled stream, default deadline)", () => v.verifyRequest(request(good.token, stalledReader)), ["body_timeout"]);

const enc = new TextEncoder();
/** The hostile cases: [name, call, codes]. Each call is made 21 000 / cases times, alternating. */
const cases = [
  ["verify(detached ArrayBuffer)", () => v.verify(detachedBuffer(), good.token), ["invalid_input"]],
  ["verify(view of a detached buffer)", () => v.verify(detachedView(), good.token), ["invalid_input"]],
  ["verify(Proxy trapping everything)", () => v.verify(trapAll(), good.token), ["invalid_input"]],
  ["verify(revoked Proxy)", () => v.verify(revoked(), good.token), ["invalid_input"]],
  ["verify(Proxy of a function)", () => v.verify(trapAllFn(), trapAllFn()), ["invalid_input"]],
  ["verify(object with a throwing byteLength)", () => v.verify(getterThrows("byteLength", "buffer"), good.token), ["invalid_input"]],
  ["verify(fake ArrayBuffer claiming 2^30 items)", () => v.verify(fakeBuffer(), good.token), ["invalid_input"]],
  ["verify(body, Proxy header)", () => v.verify(good.body, trapAll()), ["invalid_input"]],
  ["verify(body, header with a throwing toString)", () => v.verify(good.body, { toString: hostile }), ["invalid_input"]],
  ["verifyRequest(read() answers 42)", () => v.verifyRequest(request(good.token, readerAnswering(() => 42))), ["invalid_input"]],
  ["verifyRequest(read() answers undefined)", () => v.verifyRequest(request(good.token, readerAnswering(() => undefined))), ["invalid_input"]],
  ["verifyRequest(read() answers a thenable whose then throws)", () => v.verifyRequest(request(good.token, readerAnswering(thenThrows))), ["invalid_input"]],
  ["verifyRequest(read() answers a Promise with a throwing then)", () => v.verifyRequest(request(good.token, readerAnswering(() => promiseThenThrows({ done: true })))), ["invalid_input"]],
  ["verifyRequest(read() answers a Promise with a throwing constructor)", () => v.verifyRequest(request(good.token, readerAnswering(() => promiseCtorThrows({ done: true })))), ["invalid_input", "body_mismatch"]],
  ["verifyRequest(read() throws)", () => v.verifyRequest(request(good.token, { read: hostile })), ["invalid_input"]],
  ["verifyRequest(read() resolves a Proxy)", () => v.verifyRequest(request(good.token, readerAnswering(() => Promise.resolve(trapAll())))), ["invalid_input"]],
  ["verifyRequest(chunk is a detached view)", () => v.verifyRequest(request(good.token, readerAnswering(() => Promise.resolve({ done: false, value: detachedView() })))), ["invalid_input"]],
  ["verifyRequest(chunk is a fake buffer)", () => v.verifyRequest(request(good.token, readerAnswering(() => Promise.resolve({ done: false, value: fakeBuffer() })))), ["invalid_input"]],
  ["verifyRequest(getReader throws)", () => v.verifyRequest({ headers: { get: () => good.token }, body: { getReader: hostile } }), ["invalid_input"]],
  ["verifyRequest(body getter throws)", () => v.verifyRequest(Object.defineProperty({ headers: { get: () => good.token } }, "body", { get: hostile })), ["invalid_input"]],
  ["verifyRequest(headers getter throws)", () => v.verifyRequest(getterThrows("headers")), ["invalid_input"]],
  ["verifyRequest(headers.get answers an object claiming 2^30 characters)", () => v.verifyRequest({ headers: { get: () => ({ length: 2 ** 30, charCodeAt: () => 65 }) } }), ["invalid_input"]],
  ["verifyRequest(Proxy)", () => v.verifyRequest(trapAll()), ["invalid_input"]],
  ["verifyRequest(arrayBuffer() answers a detached buffer)", () => v.verifyRequest({ headers: { get: (n) => (n === "x-svc-signature" ? good.token : null) }, arrayBuffer: () => Promise.resolve(detachedBuffer()) }), ["invalid_input"]],
  ["markProcessed(Proxy)", () => v.markProcessed(trapAll()), ["invalid_input"]],
  ["releaseClaim(getter throws)", () => v.releaseClaim(getterThrows("eventId")), ["invalid_input"]],
  ["renewClaim(Proxy)", () => v.renewClaim(trapAll()), ["invalid_input"]],
  ["handle(Proxy, handler)", () => v.handle(trapAll(), () => {}), ["invalid_input"]],
  ["handle({ body: view of a detached buffer, signature }, handler)", () => v.handle({ body: detachedView(), signature: good.token }, () => {}), ["invalid_input"]],
  ["handle({ signature getter throws }, handler)", () => v.handle(getterThrows("signature"), () => {}), ["invalid_input"]],
  ["handle(delivery, Proxy of a non-function)", () => v.handle({ body: good.body, signature: good.token }, trapAll()), ["invalid_input"]],
  ["handle(delivery, handler, options whose onError getter throws)", () => v.handle({ body: good.body, signature: good.token }, () => {}, getterThrows("onError")), ["invalid_options"]],
];
const sync = [
  ["verifySync(detached ArrayBuffer)", () => v.verifySync(detachedBuffer(), good.token), ["invalid_input"]],
  ["verifySync(revoked Proxy, Proxy)", () => v.verifySync(revoked(), trapAll()), ["invalid_input"]],
  ["verifySync(lying view)", () => v.verifySync(lyingView(good.body + " "), good.token), ["body_mismatch"]],
  ["new WebhookVerifier(Proxy)", () => new WebhookVerifier(trapAll()), ["invalid_options"]],
  ["new WebhookVerifier(revoked Proxy)", () => new WebhookVerifier(revoked()), ["invalid_options"]],
  ["new WebhookVerifier(throwing getter)", () => new WebhookVerifier(withGetterThrowing({ jwks }, "timeoutMs")), ["invalid_options"]],
  ["new WebhookVerifier(throwing jwks getter)", () => new WebhookVerifier(getterThrows("jwks")), ["invalid_options"]],
  ["new WebhookVerifier(jwks with a throwing toJSON)", () => new WebhookVerifier({ jwks: { keys: [], toJSON: hostile } }), ["invalid_jwks", "invalid_options"]],
  ["new WebhookVerifier(dedupe store Proxy)", () => new WebhookVerifier({ jwks, dedupe: trapAll() }), ["invalid_options"]],
  ["new WebhookVerifier(fetch and now Proxies of functions)", () => new WebhookVerifier({ jwks, fetch: trapAllFn(), now: trapAllFn() }), ["invalid_options"]],
];

await checks.run(`${HOSTILE_CALLS} hostile calls at one verifier: each async one rejects (never throws) with its code, each sync one throws its code`, async () => {
  const failures = new Map();
  const all = [...cases, ...sync];
  for (let i = 0; i < HOSTILE_CALLS; i++) {
    const [what, f, codes] = all[i % all.length];
    try {
      if (i % all.length < cases.length) await rejects(what, f, codes);
      else throws(what, f, codes);
    } catch (e) {
      if (!failures.has(what)) failures.set(what, `${e.message} (first at call ${i})`);
    }
  }
  assert(failures.size === 0, [...failures.values()].join("; "));
});

await checks.run("after them, the same instance still verifies a valid token (verify, verifySync, verifyRequest) and nothing queued hangs", async () => {
  const fresh = await mint();
  const event = await timed(5000, v.verify(fresh.body, fresh.token), "verify");
  assert(event.eventId === fresh.eventId && event.duplicate === false, `verify gave ${JSON.stringify(event)}`);
  assert(v.verifySync(fresh.body, fresh.token).duplicate === true, "verifySync of the same event is not a duplicate");
  const another = await mint();
  const chunks = [enc.encode(another.body.slice(0, 10)), enc.encode(another.body.slice(10))];
  const reader = { read: () => Promise.resolve(chunks.length ? { done: false, value: chunks.shift() } : { done: true }) };
  const viaRequest = await timed(5000, v.verifyRequest(request(another.token, reader)), "verifyRequest");
  assert(viaRequest.eventId === another.eventId, "verifyRequest gave another event");
  const many = await Promise.all(Array.from({ length: 50 }, () => mint()));
  const settled = await timed(10_000, Promise.allSettled(many.map((m) => v.verify(m.body, m.token))), "50 concurrent verify");
  assert(settled.every((s) => s.status === "fulfilled"), "a concurrent verify failed");
});

await checks.run("after them, the same instance verifies at the same speed (best round within 1.5x of before)", async () => {
  const after = await speed(v, good.body, good.token);
  console.log(`     verifications/s before ${before.toFixed(0)}, after ${after.toFixed(0)} (${(after / before).toFixed(2)}x)`);
  assert(after * 1.5 >= before, `after ${after.toFixed(0)}/s, before ${before.toFixed(0)}/s`);
});

await checks.run("a clock that calls the verifier back (verifySync inside now()) during a key fetch and markProcessed: no panic", async () => {
  let inner;
  const reenter = () => {
    if (inner) {
      try {
        inner.verifySync(good.body, good.token);
      } catch {
        // keys_not_loaded or a verdict: either is an answer, not a crash.
      }
    }
    return NOW;
  };
  inner = new WebhookVerifier({
    jwksUrl: "https://keys.example/jwks.json",
    now: reenter,
    dedupe: true,
    fetch: async () => new Response(JSON.stringify(jwks), { headers: { "content-type": "application/json" } }),
  });
  const event = await inner.verify(good.body, good.token);
  assert(event.eventId === good.eventId, "verify gave another event");
  await inner.markProcessed(event);
  const again = await inner.verify(good.body, good.token);
  assert(again.duplicate === true, "the processed event is not a duplicate");
});

await checks.run("hostile key-set fetches are jwks_unavailable, never a crash (fetch throws, answers a hostile thenable, a Response whose body lies)", async () => {
  const fetches = [
    hostile,
    () => thenThrows(),
    () => promiseThenThrows(new Response("{}")),
    () => promiseCtorThrows(new Response("{}")),
    () => Promise.resolve(trapAll()),
    () => Promise.resolve({ status: 200, headers: { get: () => null }, body: { getReader: () => readerAnswering(() => 7) } }),
    () => Promise.resolve({ status: 200, headers: { get: () => null }, body: null, arrayBuffer: () => detachedBuffer() }),
    () => Promise.resolve({ get status() { throw new Error("hostile"); } }),
  ];
  for (const [i, fetch] of fetches.entries()) {
    const remote = new WebhookVerifier({ jwksUrl: "https://keys.example/jwks.json", now: NOW, fetch, timeoutMs: 500 });
    await rejects(`fetch #${i}`, () => remote.verify(good.body, good.token), ["jwks_unavailable"]);
  }
});

await checks.run("hostile dedupe stores: a claim() answering a thenable whose then throws rejects verify (the store's own error), never throws", async () => {
  const store = { claim: () => thenThrows(), release: () => {}, add: () => {} };
  const withStore = new WebhookVerifier({ jwks, now: NOW, dedupe: store });
  let p;
  try {
    p = withStore.verify(good.body, good.token);
  } catch (e) {
    throw new Error(`verify threw synchronously: ${e.message}`);
  }
  let error;
  await p.catch((e) => (error = e));
  assert(error?.message === "hostile", `verify settled with ${error}`);
  const promiseStore = { claim: () => promiseCtorThrows(true), release: () => promiseThenThrows(), add: () => {} };
  const v2 = new WebhookVerifier({ jwks, now: NOW, dedupe: promiseStore });
  await v2.verify(good.body, good.token).catch(() => {});
  await v2.releaseClaim(good.eventId).catch(() => {});
  throws("verifySync with a claim() answering a promise", () => v2.verifySync(good.body, good.token), ["invalid_options"]);
  assert((await v.verify(good.body, good.token)).eventId === good.eventId, "the main verifier broke");
});

await checks.run("hostile handlers and stores under handle: a handler that is a throwing Proxy, a store whose every answer is hostile: answers, never a throw or a hang", async () => {
  const fresh = await mint();
  const delivery = { body: fresh.body, signature: fresh.token };
  const quiet = { onError: () => {} };
  const viaProxy = await timed(5000, v.handle(delivery, trapAllFn(), quiet), "handle with a Proxy handler");
  assert(viaProxy.status === 500, `a handler that throws on call answered ${viaProxy.status}`);
  const thenable = await timed(5000, v.handle(delivery, () => thenThrows(), quiet), "handle with a thenable handler");
  assert(thenable.status === 500, `a handler answering a hostile thenable answered ${thenable.status}`);
  const store = { claim: () => promiseThenThrows("won"), renew: () => thenThrows(), release: hostile, add: () => trapAll() };
  const withStore = new WebhookVerifier({ jwks, now: NOW, dedupe: store, claimTtlSeconds: 1 });
  const answer = await timed(5000, withStore.handle({ body: good.body, signature: good.token }, () => {}, quiet), "handle with a hostile store");
  assert(answer.status === 503, `a claim() whose answer's then throws answered ${answer.status}`);
  const fresh2 = await mint();
  const after = await timed(5000, v.handle({ body: fresh2.body, signature: fresh2.token }, () => {}), "handle after them");
  assert(after.status === 200, `the main verifier's handle answered ${after.status}`);
});

// ---- the read deadline ----
await checks.run("verifyRequest: a stalled body stream is refused body_timeout at bodyTimeoutMs, and the stream is cancelled", async () => {
  const quick = new WebhookVerifier({ jwks, now: NOW, bodyTimeoutMs: 150 });
  const readers = Array.from({ length: 20 }, () => ({ read: () => new Promise(() => {}), cancelled: 0, cancel() { this.cancelled++; return Promise.resolve(); } }));
  const t0 = performance.now();
  await Promise.all(readers.map((r, i) => rejects(`stalled #${i}`, () => quick.verifyRequest(request(good.token, r)), ["body_timeout"])));
  const ms = performance.now() - t0;
  assert(ms >= 140 && ms < 3000, `refused after ${ms.toFixed(0)} ms`);
  assert(readers.every((r) => r.cancelled === 1), "a stalled stream was not cancelled");
  // A stream that only ever answers settled promises never lets a timer run: the clock ends it.
  const busy = { read: () => Promise.resolve({ done: false, value: new Uint8Array(0) }), cancelled: 0, cancel() { this.cancelled++; } };
  await rejects("a stream of empty chunks", () => quick.verifyRequest(request(good.token, busy)), ["body_timeout"]);
  assert(busy.cancelled === 1, "the stream of empty chunks was not cancelled");
  throws("bodyTimeoutMs: 0", () => new WebhookVerifier({ jwks, bodyTimeoutMs: 0 }), ["invalid_options"]);
});

await checks.run("verifyRequest: with the default deadline (a few seconds) a stalled stream ends too, cancelled", async () => {
  await timed(15_000, defaultDeadline, "the default deadline");
  const s = (performance.now() - stalledSince) / 1000;
  assert(s > 3 && s < 14, `refused after ${s.toFixed(1)} s`);
  assert(stalledReader.cancelled === 1, "the stalled stream was not cancelled");
});

// ---- numbers read exactly ----
/** Number texts of every shape: 1 to 30 digits, the point anywhere, exponents -340..340 (fixed seed). */
function numberTexts(n) {
  let s = 0x2545f491;
  const next = () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0), s);
  const out = [];
  while (out.length < n) {
    const digits = 1 + (next() % 30);
    let m = String(1 + (next() % 9));
    for (let i = 1; i < digits; i++) m += String(next() % 10);
    const at = 1 + (next() % digits);
    if (at < digits && next() % 2) m = `${m.slice(0, at)}.${m.slice(at)}`;
    const e = (next() % 681) - 340;
    out.push(`${next() % 4 ? "" : "-"}${m}${next() % 3 ? `e${e}` : ""}`);
  }
  return out;
}

await checks.run("a token with exp 1.7976931348623157e308 (the largest double) verifies; exp 1e400 is refused missing_claim", async () => {
  const claims = (exp) => `{"iss":"svc-process","processingId":"agr_1","eventId":"evt_max","type":"agent_run.completed","bodySha256":"${sha(maxBody)}","iat":${NOW - 10},"exp":${exp}}`;
  const maxBody = JSON.stringify({ eventId: "evt_max", type: "agent_run.completed", processingId: "agr_1", occurredAt: "2026-09-21T12:00:00.000Z", data: {} });
  const fresh = new WebhookVerifier({ jwks, now: NOW });
  const event = await fresh.verify(maxBody, await mintRaw(claims("1.7976931348623157e308")));
  assert(event.eventId === "evt_max", "not verified");
  await rejects("exp 1e400", async () => fresh.verify(maxBody, await mintRaw(claims("1e400"))), ["missing_claim"]);
});

await checks.run("numbers are read as JSON.parse reads them: 3 000 seeded key-set ages round-trip through exportKeys", () => {
  let checked = 0;
  for (const text of numberTexts(3000)) {
    const want = JSON.parse(text);
    if (!(Number.isFinite(want) && want <= NOW + 300)) continue;
    const seeded = new WebhookVerifier({ jwksUrl: "https://keys.example/jwks.json", now: NOW, jwks: `{"keys":${JSON.stringify(jwks.keys)},"fetchedAt":${text},"staleAt":${NOW + 60}}` });
    const got = seeded.exportKeys().fetchedAt;
    assert(Object.is(got, want) || (got === 0 && want === 0), `fetchedAt ${text}: ${got} != JSON.parse ${want}`);
    seeded.free();
    checked++;
  }
  assert(checked > 1000, `only ${checked} numbers checked`);
});

// ---- a lone surrogate drops only its key ----
await checks.run("a key set with one key holding a lone surrogate keeps its other keys (static object, text and fetched)", async () => {
  const odd = { ...jwk, kid: "\ud800" };
  const other = { ...jwk, kid: "k2", x: jwk.x };
  const set = { keys: [odd, jwk, { ...other, note: "\udc00" }] };
  for (const [what, option] of [["object", set], ["text", JSON.stringify(set)]]) {
    const fixed = new WebhookVerifier({ jwks: option, now: NOW });
    const event = await fixed.verify(good.body, good.token);
    assert(event.eventId === good.eventId, `${what}: not verified`);
    const kids = fixed.exportKeys().keys.map((k) => k.kid).sort();
    assert(JSON.stringify(kids) === '["k1","k2"]', `${what}: kept ${JSON.stringify(kids)}`);
  }
  const fetched = new WebhookVerifier({ jwksUrl: "https://keys.example/jwks.json", now: NOW, fetch: async () => new Response(JSON.stringify(set)) });
  assert((await fetched.verify(good.body, good.token)).eventId === good.eventId, "fetched: not verified");
});

// ---- TestSigner ----
await checks.run("TestSigner: hostile options, events and urls reject with their codes (never throw), and the signer still signs", async () => {
  await rejects("generate(Proxy)", () => TestSigner.generate(trapAll()), ["invalid_options"]);
  await rejects("generate(throwing getter)", () => TestSigner.generate(getterThrows("kid")), ["invalid_options"]);
  await rejects("generate(privateJwk with a throwing toJSON)", () => TestSigner.generate({ privateJwk: { toJSON: hostile } }), ["invalid_options"]);
  // An own `__proto__` member (JSON.parse makes one) is a member like any other, never the copy's prototype.
  await rejects("generate({ __proto__: { kid } } from JSON.parse)", () => TestSigner.generate(JSON.parse('{"__proto__": {"kid": "x"}}')), ["invalid_options"]);
  throws("new WebhookVerifier({ __proto__: {...} } from JSON.parse)", () => new WebhookVerifier({ jwks, ...JSON.parse('{"__proto__": {"jwksUrl": "https://elsewhere.example/jwks"}}') }), ["invalid_options"]);
  const signer = await TestSigner.generate({ now: NOW });
  const event = { type: "agent_run.completed", processingId: "agr_1" };
  for (let i = 0; i < 300; i++) {
    await rejects("sign(Proxy)", () => signer.sign(trapAll()), ["invalid_input"]);
    await rejects("sign(revoked Proxy)", () => signer.sign(revoked()), ["invalid_input"]);
    await rejects("sign(throwing getter)", () => signer.sign(getterThrows("type")), ["invalid_input"]);
    await rejects("sign(data with a throwing toJSON)", () => signer.sign({ ...event, data: { toJSON: hostile } }), ["invalid_input"]);
    await rejects("request(Symbol url)", () => signer.request(Symbol("u"), event), ["invalid_input"]);
    await rejects("request(url with a throwing toString)", () => signer.request({ toString: hostile }, event), ["invalid_input"]);
    await rejects("request(not a URL)", () => signer.request("not a url", event), ["invalid_input"]);
  }
  const clocked = await TestSigner.generate({ now: hostile });
  await rejects("sign with a clock that throws", () => clocked.sign(event), ["invalid_options"]);
  const signed = await signer.sign(event);
  const fixed = new WebhookVerifier({ jwks: signer.jwks, now: NOW });
  assert((await fixed.verify(signed.body, signed.signature)).type === event.type, "the signed event does not verify");
});

// ---- DocAuto options (read by interop.rs) ----
await checks.run("new DocAuto(options with a throwing getter / a Proxy / a revoked Proxy) throws an error with a code", () => {
  for (const [what, options] of [["getter", getterThrows("apiKey")], ["Proxy", trapAll()], ["revoked", revoked()]]) {
    try {
      new DocAuto(options);
    } catch (e) {
      assert(e instanceof Error && typeof e.code === "string", `${what}: threw ${e?.name} without a code: ${e?.message}`);
      continue;
    }
    throw new Error(`${what}: did not throw`);
  }
  assert(new DocAuto({ apiKey: "sk_test", baseUrl: "http://127.0.0.1:9" }).baseUrl === "http://127.0.0.1:9", "a valid client cannot be made");
});

// ---- RealtimeTranscriber ----
/** A WebSocket double: the test plays the service through `serve`. */
class FakeSocket {
  static all = [];
  constructor(url) {
    this.url = url;
    FakeSocket.all.push(this);
  }
  set binaryType(_) {}
  send(data) {
    if (typeof data === "string" && JSON.parse(data).type === "stop") queueMicrotask(() => this.onclose?.({ code: 1000, reason: "" }));
  }
  close(code = 1000, reason = "") {
    queueMicrotask(() => this.onclose?.({ code, reason }));
  }
  serve(message) {
    this.onmessage?.({ data: typeof message === "string" ? message : JSON.stringify(message) });
  }
}

async function openTranscriber() {
  const t = new RealtimeTranscriber({ url: "wss://rt.example/s?ticket=t", WebSocket: FakeSocket });
  const events = [];
  for (const k of ["partial", "final", "error"]) t.addEventListener(k, (e) => events.push({ type: k, detail: e.detail }));
  const started = t.start({ microphone: false });
  await new Promise((r) => setTimeout(r, 0));
  FakeSocket.all.at(-1).serve({ type: "open", sessionId: "rts_1", sampleRate: 16000 });
  await timed(2000, started, "start");
  return { t, events, socket: FakeSocket.all.at(-1) };
}

await checks.run("RealtimeTranscriber: hostile options, audio, rates and socket events are refused with codes, never a crash", async () => {
  throws("new RealtimeTranscriber(Proxy)", () => new RealtimeTranscriber(trapAll()), ["invalid_options"]);
  throws("new RealtimeTranscriber(revoked)", () => new RealtimeTranscriber(revoked()), ["invalid_options"]);
  // A WebSocket constructor that throws when constructed: the session reports it, nothing unwinds.
  const noSocket = new RealtimeTranscriber({ url: "wss://rt.example/s", WebSocket: trapAllFn() });
  const noSocketEvents = [];
  noSocket.addEventListener("close", (e) => noSocketEvents.push(e.detail));
  noSocket.sendAudio(new Int16Array(4), 16000);
  await new Promise((r) => setTimeout(r, 20));
  await timed(5000, noSocket.stop(), "stop after a throwing WebSocket");
  assert(noSocket.state === "closed", `state ${noSocket.state}`);
  throws("new RealtimeTranscriber(throwing url getter)", () => new RealtimeTranscriber(withGetterThrowing({ WebSocket: FakeSocket }, "url")), ["invalid_options"]);
  throws("new RealtimeTranscriber(throwing WebSocket getter)", () => new RealtimeTranscriber(withGetterThrowing({ url: "wss://rt.example/s" }, "WebSocket")), ["invalid_options"]);
  const { t, events, socket } = await openTranscriber();
  const fakeSamples = { [Symbol.toStringTag]: "Float32Array", length: 2 ** 30, byteLength: 2 ** 32 };
  const lyingSamples = Object.defineProperty(new Float32Array(320), "length", { get: hostile });
  for (let i = 0; i < 2000; i++) {
    throws("sendAudio(fake Float32Array)", () => t.sendAudio(fakeSamples, 16000), ["unsupported_audio_format"]);
    throws("sendAudio(Proxy)", () => t.sendAudio(trapAll(), 16000), ["unsupported_audio_format"]);
    throws("sendAudio(rate with a throwing valueOf)", () => t.sendAudio(new Float32Array(4), { valueOf: hostile }), ["unsupported_audio_format"]);
    throws("sendAudio(Symbol rate)", () => t.sendAudio(new Int16Array(4), Symbol("r")), ["unsupported_audio_format"]);
    socket.onmessage?.(trapAll());
    socket.onmessage?.(getterThrows("data"));
  }
  t.sendAudio(lyingSamples, 16000); // a real Float32Array is read by its own slots, whatever its properties say
  await rejects("start(Proxy) while started", () => t.start(trapAll()), ["invalid_options", "invalid_state"]);
  socket.serve({ type: "final", text: "after", start: 0, end: 2 });
  assert(events.some((e) => e.type === "final" && e.detail.text === "after"), "the session stopped reading");
  await timed(5000, t.stop(), "stop");
  const idle = new RealtimeTranscriber({ url: "wss://rt.example/s", WebSocket: FakeSocket });
  await rejects("start(Proxy)", () => idle.start(trapAll()), ["invalid_options"]);
  // getUrl answering what no URL is (it throws, a thenable whose then throws, a Promise with its own throwing
  // then or constructor, a Proxy): start() rejects with the session's code, and the transcriber stops cleanly.
  const url = "wss://rt.example/s?ticket=t";
  for (const [what, getUrl] of [
    ["throws", hostile],
    ["a thenable whose then throws", thenThrows],
    ["a Promise with a throwing then", () => promiseThenThrows(url)],
    ["a Promise with a throwing constructor", () => promiseCtorThrows(url)],
    ["a Proxy", trapAll],
  ]) {
    const t2 = new RealtimeTranscriber({ getUrl, WebSocket: FakeSocket, reconnectAttempts: 1, reconnectDelayMs: 1 });
    const e = await timed(5000, t2.start({ microphone: false }).then(() => undefined, (err) => err), `start, getUrl ${what}`);
    assert(e instanceof Error && typeof e.code === "string", `getUrl ${what}: start settled with ${e}`);
    await timed(5000, t2.stop(), `stop, getUrl ${what}`);
  }
});

await checks.run("RealtimeTranscriber: transcript times are read as JSON.parse reads them; 1e400 is an invalid_message error event", async () => {
  const { t, events, socket } = await openTranscriber();
  const texts = numberTexts(1500);
  for (const text of texts) socket.serve(`{"type":"final","text":"n","start":0,"end":${text}}`);
  const finals = events.filter((e) => e.type === "final");
  let compared = 0;
  for (const text of texts) {
    const want = JSON.parse(text);
    if (!Number.isFinite(want)) continue;
    const got = finals[compared++]?.detail.end;
    assert(got === want, `end ${text}: ${got} != JSON.parse ${want}`);
  }
  assert(compared === finals.length && compared > 1000, `${compared} finite numbers, ${finals.length} finals`);
  const errorsBefore = events.filter((e) => e.type === "error").length;
  socket.serve('{"type":"final","text":"inf","start":1e400,"end":1}');
  socket.serve('{"type":"partial","text":"inf","start":0,"end":-1e999}');
  const errors = events.filter((e) => e.type === "error").slice(errorsBefore);
  assert(errors.length === 2 && errors.every((e) => e.detail.code === "invalid_message"), JSON.stringify(errors.map((e) => e.detail.code)));
  assert(!events.some((e) => e.type !== "error" && e.detail.text === "inf"), "an infinite time reached the caller");
  await timed(5000, t.stop(), "stop");
});

// ---- every import that can throw is caught: the glue's imports, checked one by one ----
// wasm-bindgen wraps an import declared `catch` in `handleError(...)`, and instanceof checks in try/catch; the
// functions of interop.js are imported as they are (they catch inside). Every other import must be one that cannot
// throw on a value the application hands over: each pattern below says why. A new js-sys call on a caller's value
// (Object.assign, new Uint8Array, a getter) fails this check until it is declared `catch` or moved to interop.js.
const NEVER_THROWS = [
  // wasm-bindgen's own: typeof checks, ===, truthiness, its closures, its class wrappers, its intentional throw.
  [/^(const (v|val|obj) = arg[01]; )?const ret = (typeof\(?(v|val|obj|arg0)\)? ===? '\w+'|typeof arg0;|!arg0;|arg0 === (arg1|null|undefined);)/, "typeof, ===, !"],
  [/^arg0\._wbg_cb_unref\(\);$/, "its closures"],
  [/^const ret = \w+\.__wrap\(arg0\); return ret;$/, "its class wrappers"],
  [/^throw new Error\(getStringFromWasm0/, "a Rust panic's throw (a bug, not hostile input)"],
  [/^const ret = typeof (global|globalThis|self|window) === 'undefined'/, "the global object"],
  // Intrinsics on any value, or on values of this module's making.
  [/^const ret = (new Error\(getStringFromWasm0\(arg0, arg1\)\)|ArrayBuffer\.isView\(arg0\)|new Object\(\)|new Array\(\)|Date\.now\(\)|Math\.random\(\)|Array\.of\([^)]*\)|Number\.parseFloat\(getStringFromWasm0\(arg0, arg1\)\)|new TypeError\(getStringFromWasm0\(arg0, arg1\)\));/, "intrinsics"],
  [/^queueMicrotask\(arg0\);$/, "intrinsic"],
  // getrandom's JS backend (the emulator's module): it finds the host's crypto on the global object and `process`.
  [/^const ret = arg0\.(crypto|msCrypto|node|process|versions);/, "getrandom: the global object's crypto and process"],
  [/^const ret = arg0\.subarray\(arg1 >>> 0, arg2 >>> 0\);/, "getrandom: a view of this module's making"],
  [/^const ret = Promise\.(reject|race)\(arg0\);/, "never throws (race: an array of this module's promises)"],
  [/^const ret = Promise\.resolve\(arg0\);/, "values of this module's making (a caller's value goes through interop.js settled())"],
  [/^const ret = arg0\.then\(arg1(, arg2)?\);/, "promises of this module's making (JsFuture, host crypto)"],
  [/^const ret = new (Uint8Array|Int16Array|Float32Array)\((getArray\w+FromWasm0\(arg0, arg1\)|arg0 >>> 0)\);/, "a new array"],
  [/^(Uint8Array|Int16Array|Float32Array)\.prototype\.set\.call\(getArray\w+FromWasm0\(arg0, arg1\), arg2\);$/, "to_vec of a view of this module's making (interop.js)"],
  [/^const ret = arg0\.(length|signal|push\(arg1\)|charCodeAt\(arg1 >>> 0\)|isPrototypeOf\(arg1\)|queueMicrotask);/, "this module's arrays, views, strings and AbortControllers; the global object"],
  [/^const ret = arg0\[arg1 >>> 0\];/, "this module's arrays"],
  [/^const ret = Object\.defineProperty\(arg0, arg1, arg2\);/, "objects of this module's making"],
  [/^const ret = Object\.create\(arg0\);/, "Object.create(null): plain_copy's target"],
  [/^const ret = Array\.isArray\(arg0\);/, "JSON.parse's output (the verified event's data)"],
  [/^const ret = arg0\.deref\(\); return isLikeNone\(ret\) \? 0 : addToExternrefTable0\(ret\);$/, "WeakRefs of this module's making (the transcriber's own JS object)"],
  [/^const ret = create(Webhook|Api|Realtime)Error\(/, "errors.js constructors"],
  [/^(openCapture|flushCapture|later|afterAll|fetchUrl)\(|^const ret = closeCapture\(/, "capture.js: catches inside"],
  [/^const ret = plainOptionsText\(arg\d, getStringFromWasm0\(arg\d, arg\d\)\);/, "interop.js: catches inside (the options' copy and JSON text)"],
  [/^(const ret = )?(observeCall|observeDelivery|observeKeyFetch|observeSession|sessionRecord|attempted|observed|settling|runHandler|providers|heldProviders|listening)\(/, "telemetry.js: catches inside (spans and metric points)"],
  // The API client's own step objects, made by its promise.js (src/wasm/client, not a caller's value).
  [/^const ret = arg0\.(status|head|text|data|parsed|unread|read|kind|message|code);/, "the client's AttemptAnswer (promise.js)"],
  // wasm-bindgen's own shims, which the `__wbg_` prefix of the unminified names left out: a cast of this module's
  // value into a JS value (a closure, a number, a string, a view), and the externref table's first slots.
  [/^\/\/ Cast intrinsic for `[^`]*`\. const ret = (arg0|getStringFromWasm0\(arg0, arg1\)|getArrayU8FromWasm0\(arg0, arg1\)|make(Mut)?Closure\(arg0, arg1, \w+\)); return ret;$/, "wasm-bindgen's casts of this module's values"],
  [/^const table = wasm\.[\w$]+; table\.set\(0, undefined\);/, "wasm-bindgen's externref table, filled at instantiation"],
  [/^const ret = utf8Bytes\(arg1\); const ptr1 = passArray8ToWasm0\(ret, wasm\.[\w$]+\);/, "promise.js: TextEncoder.encode of the string JSON.stringify made (checked to be a string first)"],
  [/^const ret = utf8Into\(arg0, getArrayU8FromWasm0\(arg1, arg2\)\); return ret;$/, "promise.js: TextEncoder.encodeInto of the string JSON.stringify made (checked to be a string first), into a view of this module's memory made in the same call"],
  [/^(let v0; .*)?const ret = (drive|sendStep|doneStep|failed)\(/, "the client's promise.js"],
];
await checks.run("every import of every module's glue that is not `catch` is one that cannot throw on a caller's value", () => {
  const root = fileURLToPath(new URL("../../pkg/", import.meta.url));
  const unexplained = new Set();
  let imports = 0;
  for (const dir of ["wasm", "webhooks/wasm", "realtime/wasm", "testing/wasm", "emulator/wasm"]) {
    const file = `${root}${dir}/docauto.js`;
    if (!existsSync(file)) continue;
    const glue = readFileSync(file, "utf8");
    const shims = glue.slice(glue.indexOf("function __wbg_get_imports"));
    // Keys are the module's minified import names (xtask/src/minify.rs); a snippet's own functions are members
    // `<key>: importN.<name>`, not shims, and are not matched.
    for (const m of shims.matchAll(/^\s{8}([\w$]+): function\(([^)]*)\) \{\n([\s\S]*?)\n\s{8}\},?$/gm)) {
      imports++;
      const [, name, , text] = m;
      if (/handleError\(|try \{/.test(text)) continue;
      const body = text.replace(/\s+/g, " ").trim();
      if (!NEVER_THROWS.some(([re]) => re.test(body))) unexplained.add(`${dir} ${name.replace(/_[0-9a-f]{16}$/, "")}: ${body.slice(0, 120)}`);
    }
  }
  assert(imports > 100, `only ${imports} imports found: has the glue's layout changed?`);
  assert(unexplained.size === 0, `imports that may throw unwrapped: ${[...unexplained].join(" | ")}`);
});

// A cold start pays for every crossing of its first delivery: each import the glue calls for the first time is a JS
// function V8 compiles, and each call a transition. Counted by wrapping every import of a fresh instance (the next
// `new WebAssembly.Instance`), from the constructor to the verified event: 62 crossings with WebCrypto answering and
// 65 with node:crypto. A glue that hands the host its key as a JWK object built a member at a time, the algorithm
// objects likewise, and the options' copy in about twenty calls made 145 (37 distinct imports) and 158.
const CROSSINGS_BUDGET = 80;
function countCrossings() {
  const Instance = WebAssembly.Instance;
  const count = { calls: 0, imports: new Set() };
  WebAssembly.Instance = function (module, imports) {
    WebAssembly.Instance = Instance;
    for (const namespace of Object.values(imports)) {
      for (const [name, f] of Object.entries(namespace)) {
        if (typeof f !== "function") continue;
        namespace[name] = function (...args) {
          count.calls++;
          count.imports.add(name);
          return f.apply(this, args);
        };
      }
    }
    return new Instance(module, imports);
  };
  return count;
}
for (const [host, load] of [
  ["WebCrypto (the web glue, as workerd, Deno, Bun and browsers run it)", async (pkg) => {
    const glue = await import(`${pathToFileURL(`${pkg}webhooks/wasm/docauto.js`)}?crossings`);
    glue.initSync({ module: readFileSync(`${pkg}webhooks/wasm/docauto-webhooks.wasm`) });
    return glue.WebhookVerifier;
  }],
  ["node:crypto (the Node entry)", async (pkg) => (await import(`${pathToFileURL(`${pkg}webhooks/node.js`)}?crossings`)).WebhookVerifier],
]) {
  await checks.run(`a fresh verifier's construction and first delivery cross the boundary at most ${CROSSINGS_BUDGET} times, ${host}`, async () => {
    const count = countCrossings();
    const Verifier = await load(fileURLToPath(new URL("../../pkg/", import.meta.url)));
    assert(count.calls > 0, "no import was counted: the entry did not instantiate through WebAssembly.Instance");
    const { body, token, eventId } = await mint();
    const event = await new Verifier({ jwks, now: NOW }).verify(body, token);
    assert(event.eventId === eventId, `verified ${event.eventId}`);
    console.log(`  ${count.calls} crossings, ${count.imports.size} distinct imports`);
    assert(count.calls <= CROSSINGS_BUDGET, `${count.calls} crossings (${count.imports.size} distinct imports)`);
  });
}

report("wasm boundary: hostile JS values (node)", checks);
