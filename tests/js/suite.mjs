// The shared verification suite: runs against the BUILT package in every runtime (no test framework, no runtime
// APIs beyond what Node, Deno, Bun, workerd, Vercel's edge runtime and browsers all have).
// `runSuite(docauto, fixtures, log)` prints one line per case and returns { passed, failed }.

const enc = new TextEncoder();

/** Deep equality over JSON values, ignoring key order. */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
}

/** Collects named checks. */
export class Checks {
  constructor(log) {
    this.log = log;
    this.passed = 0;
    this.failed = 0;
  }
  async run(name, fn) {
    try {
      await fn();
      this.passed++;
      this.log(`ok   ${name}`);
    } catch (e) {
      this.failed++;
      this.log(`FAIL ${name}: ${e && e.message ? e.message : String(e)}`);
    }
  }
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

/**
 * The status a receiver answers for each failure (README.md and docs/webhooks.md, "Errors"): what every WebhookVerificationError must
 * carry as `status`.
 */
const STATUS_OF_CODE = {
  body_too_large: 413,
  body_timeout: 408,
  jwks_unavailable: 503,
  dedupe_unavailable: 503,
  invalid_input: 500,
  invalid_jwks: 500,
  invalid_options: 500,
  keys_not_loaded: 500,
};

/**
 * Asserts that `p` (a promise or a thunk) fails with a WebhookVerificationError of `code`, carrying the status to
 * answer; returns the error.
 */
export async function rejectsWith(p, code) {
  let err;
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    err = e;
  }
  assert(err !== undefined, `expected ${code}, but it succeeded`);
  assert(err instanceof Error, `expected an Error, got ${typeof err}`);
  assert(err.name === "WebhookVerificationError", `expected name WebhookVerificationError, got ${err.name}`);
  assert(err.code === code, `expected code ${code}, got ${err.code} (${err.message})`);
  const status = STATUS_OF_CODE[code] ?? 400;
  assert(err.status === status, `expected status ${status} for ${code}, got ${err.status}`);
  return err;
}

export function checkEnvelope(event, envelope) {
  assert(event && typeof event === "object", "event is not an object");
  for (const k of ["eventId", "type", "processingId", "occurredAt", "data"]) {
    assert(jsonEqual(event[k], envelope[k]), `event.${k} differs: ${JSON.stringify(event[k])}`);
  }
}

function bodyOf(c) {
  switch (c.bodyAs) {
    case "uint8array":
      return enc.encode(c.body);
    case "arraybuffer": {
      const u = enc.encode(c.body);
      return u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength);
    }
    case "number":
      return 42;
    case "hex":
      return Uint8Array.from(c.body.match(/../g).map((h) => parseInt(h, 16)));
    default:
      return c.body;
  }
}

function headerOf(c) {
  if (c.headerAs === "number") return 7;
  if (c.headerRepeat) return "a".repeat(c.headerRepeat);
  return c.header;
}

function call(v, c) {
  const body = bodyOf(c);
  const header = headerOf(c);
  switch (c.method) {
    case "verifySync":
      return () => v.verifySync(body, header);
    case "verifyRequest": {
      const headers = header === null ? {} : { "x-svc-signature": header };
      const req = new Request("https://receiver.example/webhooks", { method: "POST", headers, body });
      return () => v.verifyRequest(req);
    }
    default:
      return () => v.verify(body, header);
  }
}

/** Runs the fixture cases and the API checks; returns the counts. */
export async function runSuite(docauto, fx, log = console.log) {
  const t = new Checks(log);
  const { WebhookVerifier } = docauto;
  const base = { jwks: fx.jwks, now: fx.now };

  await t.run("the package exports WebhookVerifier and no init function", () => {
    assert(typeof WebhookVerifier === "function", "WebhookVerifier is not exported");
    assert(!("initSync" in docauto) && !("default" in docauto), "init machinery is exported");
  });

  const v = new WebhookVerifier({ ...base, dedupe: false });
  for (const c of fx.cases) {
    await t.run(`${c.name}${c.method ? ` [${c.method}]` : ""}`, async () => {
      const f = call(v, c);
      if (c.expect.ok) {
        const event = await f();
        checkEnvelope(event, c.expect.envelope);
        assert(!event.duplicate, "duplicate flagged without dedupe");
      } else {
        const err = await rejectsWith(f, c.expect.code);
        const m = String(err.message);
        assert(!(typeof c.header === "string" && c.header.length > 20 && m.includes(c.header.trim().slice(0, 20))),
          "message contains the token");
        assert(!m.includes(c.body.slice(0, 24)), "message contains the body");
      }
    });
  }

  await t.run("verifySync returns the event synchronously (not a Promise)", () => {
    const r = v.verifySync(fx.goodBody, fx.goodToken);
    assert(typeof r.then !== "function", "verifySync returned a thenable");
    checkEnvelope(r, fx.goodEnvelope);
  });

  await t.run("now given as a function is used", async () => {
    const v2 = new WebhookVerifier({ jwks: fx.jwks, now: () => fx.now + 10_000 });
    await rejectsWith(v2.verify(fx.goodBody, fx.goodToken), "expired");
  });

  // A fresh verifier's first `verify` of a key starts its WebCrypto import and chains the check on it; deliveries that
  // arrive meanwhile chain on the same import, each with its own copy of its token's bytes (the views of wasm memory
  // they were handed are reused by the next call).
  const pick = (prefix) => fx.cases.find((x) => x.name.startsWith(prefix));
  const firstDeliveries = [
    ...fx.cases.filter((x) => x.expect.ok && x.name.startsWith("valid ")),
    pick("wrong key under a known kid is invalid_signature"),
    pick("tampered body is body_mismatch"),
    pick("second key of the set is used by kid"),
  ];
  const eachItsOwnVerdict = (order, settled) => settled.forEach((s, i) => {
    const c = order[i];
    if (c.expect.ok) {
      assert(s.status === "fulfilled", `${c.name}: rejected ${s.reason?.code}`);
      checkEnvelope(s.value, c.expect.envelope);
    } else {
      assert(s.status === "rejected" && s.reason.code === c.expect.code, `${c.name}: ${s.status} ${s.reason?.code}`);
    }
  });

  await t.run("a fresh verifier's first deliveries at once (its keys still importing) each get their own verdict", async () => {
    for (const order of [firstDeliveries, [...firstDeliveries].reverse()]) {
      const fresh = new WebhookVerifier({ ...base, dedupe: false });
      eachItsOwnVerdict(order, await Promise.allSettled(order.map((c) => fresh.verify(c.body, c.header))));
    }
  });

  await t.run("a key WebCrypto refuses to import: p256 checks instead, at every delivery", async () => {
    const subtle = globalThis.crypto?.subtle;
    // Node's entry hands node:crypto over, which answers instead of WebCrypto (src/wasm/host_crypto.rs).
    const nodeHost = globalThis.process?.release?.name === "node" && !globalThis.Deno && !globalThis.Bun
      && typeof globalThis.EdgeRuntime === "undefined";
    let refused = 0;
    if (subtle) {
      Object.defineProperty(subtle, "importKey", {
        configurable: true, writable: true,
        value: () => (refused++, Promise.reject(new DOMException("refused", "NotSupportedError"))),
      });
    }
    try {
      const fresh = new WebhookVerifier({ ...base, dedupe: false });
      eachItsOwnVerdict(firstDeliveries, await Promise.allSettled(firstDeliveries.map((c) => fresh.verify(c.body, c.header))));
      for (const c of firstDeliveries) eachItsOwnVerdict([c], await Promise.allSettled([fresh.verify(c.body, c.header)]));
      assert(nodeHost || refused > 0, "WebCrypto's importKey was never asked");
    } finally {
      if (subtle) delete subtle.importKey;
    }
    assert(!subtle || typeof subtle.importKey === "function", "importKey not restored");
  });

  // The delivery that starts a key's WebCrypto import also has its body hashed by WebCrypto, beside the check (a
  // cold start then compiles no SHA-256 code in wasm); later deliveries hash in wasm. Node's entry hands
  // node:crypto over, which answers and hashes instead.
  await t.run("a key's first delivery has its body hashed by WebCrypto, and that digest decides; later ones hash in wasm; a failed digest is hashed in wasm", async () => {
    const subtle = globalThis.crypto?.subtle;
    const nodeHost = globalThis.process?.release?.name === "node" && !globalThis.Deno && !globalThis.Bun
      && typeof globalThis.EdgeRuntime === "undefined";
    if (!subtle) return;
    const digest = subtle.digest;
    let calls = 0;
    let mode = "real";
    Object.defineProperty(subtle, "digest", {
      configurable: true, writable: true,
      value: function (...args) {
        calls++;
        if (mode === "refuse") return Promise.reject(new DOMException("refused", "OperationError"));
        if (mode === "zeros") return Promise.resolve(new ArrayBuffer(32));
        return digest.apply(this, args);
      },
    });
    try {
      const valid = firstDeliveries[0];
      const tampered = pick("tampered body is body_mismatch");
      for (const [first, then] of [[tampered, valid], [valid, tampered]]) {
        const fresh = new WebhookVerifier({ ...base, dedupe: false });
        calls = 0;
        eachItsOwnVerdict([first], await Promise.allSettled([fresh.verify(first.body, first.header)]));
        const afterFirst = calls;
        eachItsOwnVerdict([then], await Promise.allSettled([fresh.verify(then.body, then.header)]));
        assert(nodeHost ? calls === 0 : afterFirst === 1 && calls === 1,
          `WebCrypto digests: ${afterFirst} after the first delivery, ${calls} after the second`);
      }
      // A digest that fails is taken in wasm instead: every verdict as before.
      mode = "refuse";
      for (const c of [valid, tampered]) {
        eachItsOwnVerdict([c], await Promise.allSettled([new WebhookVerifier({ ...base, dedupe: false }).verify(c.body, c.header)]));
      }
      // The digest WebCrypto gave is the one compared: a wrong one makes a valid body body_mismatch.
      if (!nodeHost) {
        mode = "zeros";
        await rejectsWith(new WebhookVerifier({ ...base, dedupe: false }).verify(valid.body, valid.header), "body_mismatch");
      }
    } finally {
      delete subtle.digest;
    }
    assert(subtle.digest === digest, "digest not restored");
  });

  await t.run("clockToleranceSeconds 0 rejects a token 3 s past exp", async () => {
    const c = fx.cases.find((x) => x.name.startsWith("exp within the 5 s tolerance"));
    const v2 = new WebhookVerifier({ ...base, clockToleranceSeconds: 0 });
    await rejectsWith(v2.verify(c.body, c.header), "expired");
  });

  await t.run("exportKeys round trip: the exported set verifies in a new verifier", async () => {
    const exported = v.exportKeys();
    assert(exported && Array.isArray(exported.keys), "exportKeys() has no keys array");
    const kids = exported.keys.map((k) => k.kid).sort();
    assert(jsonEqual(kids, ["k1", "k2"]), `exported kids ${kids}`);
    const again = JSON.parse(JSON.stringify(exported));
    const v2 = new WebhookVerifier({ jwks: again, now: fx.now });
    checkEnvelope(await v2.verify(fx.goodBody, fx.goodToken), fx.goodEnvelope);
    checkEnvelope(v2.verifySync(fx.goodBody, fx.goodToken), fx.goodEnvelope);
  });

  await t.run("keys of the wrong kty/crv/alg/use are ignored in a static set", async () => {
    const good = fx.jwks.keys[0];
    const keys = [
      { ...fx.jwks.keys[1], use: "enc" },
      { ...fx.jwks.keys[1], kid: "p384", crv: "P-384" },
      { ...fx.jwks.keys[1], kid: "hs", alg: "HS256" },
      { kty: "RSA", kid: "rsa", n: "AQAB", e: "AQAB" },
      good,
    ];
    const v2 = new WebhookVerifier({ jwks: { keys }, now: fx.now });
    const kids = v2.exportKeys().keys.map((k) => k.kid);
    assert(jsonEqual(kids, ["k1"]), `held kids ${kids}`);
    const k2Case = fx.cases.find((x) => x.name.startsWith("second key of the set"));
    await rejectsWith(v2.verify(k2Case.body, k2Case.header), "unknown_key");
  });

  await t.run("a static set with no usable key is invalid_jwks", async () => {
    await rejectsWith(() => new WebhookVerifier({ jwks: { keys: [] } }), "invalid_jwks");
    await rejectsWith(() => new WebhookVerifier({ jwks: { keys: [{ kty: "RSA", kid: "r", n: "AQAB", e: "AQAB" }] } }),
      "invalid_jwks");
    await rejectsWith(() => new WebhookVerifier({ jwks: { nokeys: true } }), "invalid_jwks");
  });

  await t.run("options without a key source are invalid_options", async () => {
    await rejectsWith(() => new WebhookVerifier({}), "invalid_options");
    await rejectsWith(() => new WebhookVerifier({ jwks: fx.jwks, timeoutMs: "fast" }), "invalid_options");
  });

  await t.run("a missing header (undefined or null, as Node and Fetch give it) is missing_signature in verify and verifySync", async () => {
    const v2 = new WebhookVerifier({ jwks: fx.jwks, now: fx.now });
    for (const header of [undefined, null]) {
      await rejectsWith(() => v2.verify(fx.goodBody, header), "missing_signature");
      await rejectsWith(() => v2.verifySync(fx.goodBody, header), "missing_signature");
    }
    await rejectsWith(() => v2.verify(fx.goodBody, 42), "invalid_input");
  });

  await t.run("verifySync before any key set is held is keys_not_loaded", async () => {
    const v2 = new WebhookVerifier({ jwksUrl: "https://keys.invalid/jwks.json", now: fx.now });
    await rejectsWith(() => v2.verifySync(fx.goodBody, fx.goodToken), "keys_not_loaded");
  });

  await t.run("a flood of random kids against a static set is unknown_key every time", async () => {
    const [, p, s] = fx.goodToken.split(".");
    for (let i = 0; i < 50; i++) {
      const h = btoa(JSON.stringify({ alg: "ES256", kid: `rnd${i}${Math.random()}` }))
        .replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
      await rejectsWith(v.verify(fx.goodBody, `${h}.${p}.${s}`), "unknown_key");
    }
  });

  /** One receiver: verify, run the handler (which takes a while) only for a delivery that is not a duplicate, then
   * confirm. */
  const receiver = (verifier) => {
    const r = { handled: 0 };
    r.deliver = async (how) => {
      const event = how === "request"
        ? await verifier.verifyRequest(new Request("https://receiver.example/webhooks", {
          method: "POST", headers: { "x-svc-signature": fx.goodToken }, body: fx.goodBody,
        }))
        : await verifier.verify(fx.goodBody, fx.goodToken);
      if (!event.duplicate) {
        r.handled++;
        await new Promise((done) => setTimeout(done, 20)); // the handler's own work takes a while
        await verifier.markProcessed(event);
      }
      return event;
    };
    return r;
  };

  await t.run("dedupe: three concurrent deliveries of one event run the handler exactly once", async () => {
    const r = receiver(new WebhookVerifier({ ...base, dedupe: true }));
    const events = await Promise.all([r.deliver("request"), r.deliver("request"), r.deliver("verify")]);
    assert(r.handled === 1, `the handler ran ${r.handled} times`);
    assert(events.filter((e) => e.duplicate === false).length === 1, "not exactly one delivery won the claim");
    // The copies arrived while the winner's handler ran: in progress, so the receiver answers non-2xx.
    assert(events.every((e) => e.inProgress === e.duplicate), "a concurrent copy was not flagged inProgress");
    events.forEach((e) => checkEnvelope(e, fx.goodEnvelope));
  });

  await t.run("dedupe: a claimed event is a duplicate while handled; releaseClaim lets the retry through", async () => {
    const v2 = new WebhookVerifier({ ...base, dedupe: true });
    const first = await v2.verify(fx.goodBody, fx.goodToken);
    assert(first.duplicate === false, `first delivery duplicate=${first.duplicate}`);
    assert(first.inProgress === false, "the winner flagged inProgress");
    const during = await v2.verify(fx.goodBody, fx.goodToken);
    assert(during.duplicate === true, "a delivery during the handler was not flagged duplicate");
    assert(during.inProgress === true, "a delivery during the handler was not flagged inProgress");
    await v2.releaseClaim(first); // the handler failed
    const retry = await v2.verify(fx.goodBody, fx.goodToken);
    assert(retry.duplicate === false, "the retry after releaseClaim was flagged duplicate");
    await v2.markProcessed(retry);
    await v2.releaseClaim(retry.eventId); // too late: a processed mark stays
    const third = await v2.verify(fx.goodBody, fx.goodToken);
    assert(third.duplicate === true, `after markProcessed duplicate=${third.duplicate}`);
    assert(third.inProgress === false, "a processed duplicate flagged inProgress");
    checkEnvelope(third, fx.goodEnvelope);
    assert(v2.verifySync(fx.goodBody, fx.goodToken).duplicate === true, "verifySync did not see the mark");
  });

  await t.run("dedupe: verifySync claims too (the second call is the duplicate)", () => {
    const v2 = new WebhookVerifier({ ...base, dedupe: true });
    assert(v2.verifySync(fx.goodBody, fx.goodToken).duplicate === false, "first verifySync flagged duplicate");
    assert(v2.verifySync(fx.goodBody, fx.goodToken).duplicate === true, "second verifySync not flagged duplicate");
  });

  await t.run("dedupe: an unfenced claim store (0.2) gets claim/add/release and two concurrent deliveries run once", async () => {
    const held = new Map();
    const calls = [];
    const tick = () => new Promise((r) => setTimeout(r, 1));
    const store = {
      // Atomic the way a Redis SET NX is: the check and the write happen in one step, whatever the latency.
      claim: (id, ttl) => {
        calls.push(`claim:${id}:${ttl}`);
        const state = held.get(id);
        if (!state) held.set(id, "claimed");
        return tick().then(() => (!state ? true : state === "processed" ? "processed" : false));
      },
      release: async (id) => {
        calls.push(`release:${id}`);
        if (held.get(id) === "claimed") held.delete(id);
      },
      add: async (id, ttl) => {
        calls.push(`add:${id}:${ttl}`);
        held.set(id, "processed");
      },
    };
    const v2 = new WebhookVerifier({ ...base, dedupe: store });
    const r = receiver(v2);
    const [a, b] = await Promise.all([r.deliver("verify"), r.deliver("request")]);
    assert(r.handled === 1, `the handler ran ${r.handled} times`);
    assert(a.inProgress !== b.inProgress, "the concurrent copy was not flagged inProgress");
    const later = await v2.verify(fx.goodBody, fx.goodToken);
    assert(later.duplicate === true && later.inProgress === false, "claim() answering \"processed\" is not a processed duplicate");
    const id = fx.goodEnvelope.eventId;
    assert(calls.includes(`claim:${id}:60`), `claim(id, 60) not called (${calls})`);
    assert(calls.includes(`add:${id}:604800`), `add(id, 604800) not called (${calls})`);
    await v2.releaseClaim(id);
    assert(!calls.includes(`release:${id}`), `release sent for a claim already marked (${calls})`);
    await rejectsWith(() => v2.verifySync(fx.goodBody, fx.goodToken), "invalid_options");
  });

  /** A fenced store in memory, atomic per call, that records its calls (the contract of WebhookFencedStore). */
  const fencedStore = () => {
    const records = new Map();
    const calls = [];
    const live = (id) => {
      const r = records.get(id);
      return r && r.until > Date.now() ? r : undefined;
    };
    return {
      calls,
      records,
      claim: async (id, ttl, token) => {
        calls.push(["claim", id, ttl, token]);
        const r = live(id);
        if (r) return r.state === "processed" ? "processed" : "claimed";
        records.set(id, { state: "claimed", token, until: Date.now() + ttl * 1000 });
        return "won";
      },
      renew: async (id, ttl, token) => {
        calls.push(["renew", id, ttl, token]);
        const r = live(id);
        if (!r || r.state !== "claimed" || r.token !== token) return false;
        r.until = Date.now() + ttl * 1000;
        return true;
      },
      release: async (id, token) => {
        calls.push(["release", id, token]);
        const r = records.get(id);
        if (r && r.state === "claimed" && r.token === token) records.delete(id);
      },
      add: async (id, ttl) => {
        calls.push(["add", id, ttl]);
        records.set(id, { state: "processed", until: Date.now() + ttl * 1000 });
      },
    };
  };
  const delivery = (body = fx.goodBody, signature = fx.goodToken) => ({ body, signature });
  const answer = async (response) => ({ status: response.status, body: await response.json() });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  await t.run("handle: concurrent copies run the handler once; the others get 409, a later copy 200 duplicate", async () => {
    const v2 = new WebhookVerifier({ ...base, dedupe: true });
    let runs = 0;
    const handler = async () => {
      runs++;
      await sleep(30);
    };
    const request = () => new Request("https://receiver.example/hooks", {
      method: "POST", headers: { "x-svc-signature": fx.goodToken }, body: fx.goodBody,
    });
    const answers = await Promise.all([v2.handle(request(), handler), v2.handle(delivery(), handler),
      v2.handle(delivery(new TextEncoder().encode(fx.goodBody)), handler)].map((p) => p.then(answer)));
    assert(runs === 1, `the handler ran ${runs} times`);
    const statuses = answers.map((a) => a.status).sort();
    assert(jsonEqual(statuses, [200, 409, 409]), `statuses ${statuses}`);
    const won = answers.find((a) => a.status === 200);
    assert(jsonEqual(won.body, { received: fx.goodEnvelope.eventId }), `body ${JSON.stringify(won.body)}`);
    assert(answers.filter((a) => a.status === 409).every((a) => a.body.error === "in_progress"), "409 body");
    const again = await answer(await v2.handle(delivery(), handler));
    assert(again.status === 200 && again.body.duplicate === true, `a later copy: ${JSON.stringify(again)}`);
    assert(runs === 1, "a later copy ran the handler");
  });

  await t.run("handle: a handler that throws answers 500 and releases its claim (the redelivery runs it); onError sees it", async () => {
    const store = fencedStore();
    const v2 = new WebhookVerifier({ ...base, dedupe: store });
    const errors = [];
    const onError = (error, context) => errors.push([context.stage, context.event.eventId, error.message]);
    const failing = async () => {
      throw new Error("boom");
    };
    const first = await answer(await v2.handle(delivery(), failing, { onError }));
    assert(first.status === 500 && first.body.error === "handler_failed", `first: ${JSON.stringify(first)}`);
    assert(jsonEqual(errors, [["handler", fx.goodEnvelope.eventId, "boom"]]), `onError got ${JSON.stringify(errors)}`);
    const [claim] = store.calls;
    const release = store.calls.find((c) => c[0] === "release");
    assert(release && release[2] === claim[3], `released with the claim's token: ${JSON.stringify(store.calls)}`);
    assert(/^([0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$/.test(claim[3]), `the token is a UUID or 32 hex digits: ${claim[3]}`);
    let ran = 0;
    const second = await answer(await v2.handle(delivery(), async () => void ran++));
    assert(second.status === 200 && ran === 1, `the redelivery: ${JSON.stringify(second)}, ran ${ran}`);
    const tokens = store.calls.filter((c) => c[0] === "claim").map((c) => c[3]);
    assert(new Set(tokens).size === tokens.length, "each claim has its own token");
    assert(jsonEqual(store.calls.at(-1).slice(0, 3), ["add", fx.goodEnvelope.eventId, 604800]), "marked for a week");
  });

  await t.run("handle: a handler slower than claimTtlSeconds keeps its claim (renewed with its token)", async () => {
    const store = fencedStore();
    const v2 = new WebhookVerifier({ ...base, dedupe: store, claimTtlSeconds: 1 });
    const slow = v2.handle(delivery(), () => sleep(1600));
    await sleep(1200);
    const copy = await answer(await v2.handle(delivery(), () => {}));
    assert(copy.status === 409, `a copy after the first ttl: ${JSON.stringify(copy)}`);
    const done = await answer(await slow);
    assert(done.status === 200, `the slow handler: ${JSON.stringify(done)}`);
    const renewals = store.calls.filter((c) => c[0] === "renew");
    assert(renewals.length >= 3, `${renewals.length} renewals in 1.6 s with a 1 s ttl`);
    const token = store.calls[0][3];
    assert(renewals.every((c) => c[2] === 1 && c[3] === token), `renewals ${JSON.stringify(renewals)}`);
  });

  await t.run("handle: a lost claim aborts the handler's signal and is not released", async () => {
    const store = fencedStore();
    const v2 = new WebhookVerifier({ ...base, dedupe: store, claimTtlSeconds: 1 });
    let signal;
    const pending = v2.handle(delivery(), async (event, context) => {
      signal = context.signal;
      await sleep(150);
      store.records.set(event.eventId, { state: "claimed", token: "another", until: Date.now() + 60_000 });
      await new Promise((r) => signal.addEventListener("abort", r));
      throw new Error("stopped: the claim was lost");
    }, { onError: () => {} });
    const lost = await answer(await pending);
    assert(signal.aborted, "the signal did not abort");
    assert(lost.status === 500, `answer ${JSON.stringify(lost)}`);
    assert(!store.calls.some((c) => c[0] === "release"), "released a claim it had lost");
    assert(store.records.get(fx.goodEnvelope.eventId).token === "another", "the other claim was touched");
  });

  await t.run("handle: a mark refused at first is tried again, never turned into a release", async () => {
    const store = fencedStore();
    const add = store.add;
    let refusals = 2;
    store.add = async (...args) => {
      if (refusals-- > 0) throw new Error("READONLY");
      return add(...args);
    };
    const errors = [];
    const v2 = new WebhookVerifier({ ...base, dedupe: store });
    const done = await answer(await v2.handle(delivery(), () => {}, { onError: (e, c) => errors.push(c.stage) }));
    assert(done.status === 200, `answer ${JSON.stringify(done)}`);
    assert(!store.calls.some((c) => c[0] === "release"), "a failed mark was turned into a release");
    assert(store.records.get(fx.goodEnvelope.eventId).state === "processed", "not marked in the end");
    assert(errors.length === 0, `onError for a mark that succeeded later: ${errors}`);
  });

  await t.run("handle: refusals answer 400/413 { error }; a missing signature is 400; bad calls reject", async () => {
    const v2 = new WebhookVerifier({ ...base, dedupe: true, maxBodyBytes: 4096 });
    let ran = 0;
    const h = () => void ran++;
    const tampered = await answer(await v2.handle(delivery(fx.goodBody.replace("}", " }")), h));
    assert(tampered.status === 400 && tampered.body.error === "body_mismatch", `tampered: ${JSON.stringify(tampered)}`);
    const big = await answer(await v2.handle(delivery("x".repeat(5000)), h));
    assert(big.status === 413 && big.body.error === "body_too_large", `big: ${JSON.stringify(big)}`);
    const unsigned = await answer(await v2.handle({ body: fx.goodBody, signature: undefined }, h));
    assert(unsigned.status === 400 && unsigned.body.error === "missing_signature", `unsigned: ${JSON.stringify(unsigned)}`);
    const noHeader = await answer(await v2.handle(new Request("https://r.example/", { method: "POST", body: fx.goodBody }), h));
    assert(noHeader.status === 400 && noHeader.body.error === "missing_signature", `no header: ${JSON.stringify(noHeader)}`);
    assert(ran === 0, "the handler ran for a refused delivery");
    await rejectsWith(() => v2.handle(42, h), "invalid_input");
    await rejectsWith(() => v2.handle(delivery(), "not a function"), "invalid_input");
    await rejectsWith(() => v2.handle({ body: 42, signature: fx.goodToken }, h), "invalid_input");
    await rejectsWith(() => v2.handle(delivery(), h, { onError: 5 }), "invalid_options");
    await rejectsWith(() => new WebhookVerifier({ ...base, claimTtlSeconds: 0.5 }), "invalid_options");
    await rejectsWith(() => new WebhookVerifier({ ...base, claimTtlSeconds: "60" }), "invalid_options");
  });

  await t.run("handle: without dedupe it verifies and runs the handler every time", async () => {
    let runs = 0;
    const h = async (event) => {
      checkEnvelope(event, fx.goodEnvelope);
      runs++;
    };
    const a = await answer(await v.handle(delivery(), h));
    const b = await answer(await v.handle(delivery(), h));
    assert(a.status === 200 && b.status === 200 && runs === 2, `${JSON.stringify([a, b])}, ran ${runs}`);
  });

  await t.run("handle: a store that does not answer within a third of claimTtlSeconds is 503 dedupe_unavailable", async () => {
    const hung = { claim: () => new Promise(() => {}), renew: async () => true, release: async () => {}, add: async () => {} };
    const v2 = new WebhookVerifier({ ...base, dedupe: hung, claimTtlSeconds: 1 });
    const t0 = Date.now();
    const r = await answer(await v2.handle(delivery(), () => {}, { onError: () => {} }));
    assert(r.status === 503 && r.body.error === "dedupe_unavailable", `answer ${JSON.stringify(r)}`);
    assert(Date.now() - t0 < 1500, `took ${Date.now() - t0} ms`);
    await rejectsWith(() => v2.verify(fx.goodBody, fx.goodToken), "dedupe_unavailable");
  });

  await t.run("stores: a bad binding or option is invalid_options (a WebhookVerificationError); bad arguments reject invalid_input", async () => {
    const { redisStore, postgresStore, d1Store, durableObjectStore, WebhookVerificationError } = docauto;
    const query = async () => ({ rows: [], rowCount: 0 });
    const namespace = { idFromName: (n) => n, get: () => ({ fetch: async () => new Response("true") }) };
    for (const [what, make] of [
      ["redisStore()", () => redisStore()],
      ["redisStore({ eval: 1 })", () => redisStore({ eval: 1 })],
      ["redisStore({ eval, prefix: 5 })", () => redisStore({ eval: async () => 1, prefix: 5 })],
      ["postgresStore({ query, table: injection })", () => postgresStore({ query, table: "t; drop table users" })],
      ["postgresStore({ query, table: a.b.c })", () => postgresStore({ query, table: "a.b.c" })],
      ["d1Store({})", () => d1Store({})],
      ["durableObjectStore({})", () => durableObjectStore({})],
      ["durableObjectStore(namespace, { shards: 0 })", () => durableObjectStore(namespace, { shards: 0 })],
      ["durableObjectStore(namespace, { shards: 1.5 })", () => durableObjectStore(namespace, { shards: 1.5 })],
    ]) {
      const err = await rejectsWith(make, "invalid_options");
      assert(err instanceof WebhookVerificationError, `${what}: not a WebhookVerificationError`);
    }
    const store = redisStore({ eval: async () => "won" });
    assert((await store.claim("evt_1", 5, "t")) === "won", "claim through the binding");
    await rejectsWith(() => store.claim("", 5, "t"), "invalid_input");
    await rejectsWith(() => store.renew("evt_1", -1, "t"), "invalid_input");
    await rejectsWith(() => store.release("evt_1", ""), "invalid_input");
    assert(postgresStore({ query, table: "app.events" }) && durableObjectStore(namespace, { shards: 4 }), "valid options");
  });

  await t.run("dedupe by hand: renewClaim extends a held claim; release and renew use the claim's token", async () => {
    const store = fencedStore();
    const v2 = new WebhookVerifier({ ...base, dedupe: store });
    const event = await v2.verify(fx.goodBody, fx.goodToken);
    assert(event.duplicate === false, "the first delivery is a duplicate");
    const token = store.calls[0][3];
    assert((await v2.renewClaim(event)) === true, "renewClaim of a held claim");
    assert(jsonEqual(store.calls[1], ["renew", fx.goodEnvelope.eventId, 60, token]), `renew ${JSON.stringify(store.calls[1])}`);
    await v2.releaseClaim(event.eventId);
    assert(jsonEqual(store.calls[2], ["release", fx.goodEnvelope.eventId, token]), `release ${JSON.stringify(store.calls[2])}`);
    assert((await v2.renewClaim(event)) === false, "renewClaim after the release");
    await rejectsWith(() => v.renewClaim(event), "invalid_options");
  });

  await t.run("dedupe: a check-then-add store (has/add) still works", async () => {
    const seen = new Set();
    const calls = [];
    const store = {
      has: async (id) => (calls.push(`has:${id}`), seen.has(id)),
      add: async (id) => (calls.push(`add:${id}`), void seen.add(id)),
    };
    const v2 = new WebhookVerifier({ ...base, dedupe: store });
    const first = await v2.verify(fx.goodBody, fx.goodToken);
    assert(first.duplicate === false, "first delivery flagged duplicate");
    await v2.releaseClaim(first); // nothing to release: a no-op
    await v2.markProcessed(fx.goodEnvelope.eventId);
    assert(seen.has(fx.goodEnvelope.eventId), `store.add not called (${calls})`);
    const second = await v2.verify(fx.goodBody, fx.goodToken);
    assert(second.duplicate === true, "second delivery not flagged duplicate");
    assert(second.inProgress === false, "has() answers only processed ids: not inProgress");
  });

  await t.run("dedupe: a store with claim() but no release() is invalid_options; releaseClaim needs dedupe", async () => {
    await rejectsWith(() => new WebhookVerifier({ ...base, dedupe: { claim: () => true, add: () => {} } }),
      "invalid_options");
    await rejectsWith(() => new WebhookVerifier({ ...base, dedupe: { add: () => {} } }), "invalid_options");
    await rejectsWith(() => v.releaseClaim(fx.goodEnvelope.eventId), "invalid_options");
  });

  // Bounded reads: a body stream that counts what is pulled from it and whether it was cancelled.
  const CHUNK = 64 * 1024;
  function countingStream(total) {
    const state = { pulled: 0, cancelled: false };
    const stream = new ReadableStream(
      {
        pull(controller) {
          if (state.pulled >= total) return controller.close();
          state.pulled += CHUNK;
          controller.enqueue(new Uint8Array(CHUNK));
        },
        cancel() {
          state.cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return { stream, state };
  }
  // A `Request` whose body is a stream where the runtime supports one (the standard feature test: `duplex` is read
  // and the stream is not turned into text). Firefox does not: it sends the text "[object ReadableStream]" instead;
  // there the same stream goes in a Request-like object (`headers` + `body`), which is what a framework hands over.
  const requestStreams = (() => {
    let duplexRead = false;
    try {
      const probe = new Request("https://receiver.example/", {
        method: "POST",
        body: new ReadableStream(),
        get duplex() {
          duplexRead = true;
          return "half";
        },
      });
      return duplexRead && !probe.headers.has("content-type");
    } catch {
      return false;
    }
  })();
  function streamRequest(stream, header) {
    if (!requestStreams) return { headers: new Headers({ "x-svc-signature": header }), body: stream };
    return new Request("https://receiver.example/webhooks", {
      method: "POST",
      headers: { "x-svc-signature": header },
      body: stream,
      duplex: "half",
    });
  }

  await t.run("maxBodyBytes: a 64 MiB body with a garbage signature is not read (malformed_signature)", async () => {
    const { stream, state } = countingStream(64 * 1024 * 1024);
    await rejectsWith(() => v.verifyRequest(streamRequest(stream, "garbage")), "malformed_signature");
    assert(state.pulled === 0, `pulled ${state.pulled} bytes before refusing the header`);
  });

  await t.run("maxBodyBytes: a streamed body is read only up to the cap, then cancelled (body_too_large)", async () => {
    const vc = new WebhookVerifier({ ...base, maxBodyBytes: 100 * 1024 });
    const { stream, state } = countingStream(64 * 1024 * 1024);
    await rejectsWith(() => vc.verifyRequest(streamRequest(stream, fx.goodToken)), "body_too_large");
    assert(state.pulled <= 100 * 1024 + 2 * CHUNK, `pulled ${state.pulled} bytes past a 100 KiB cap`);
    assert(state.cancelled, "the body stream was not cancelled");
  });

  await t.run("maxBodyBytes: a default verifier refuses a 64 MiB stream after at most 1 MiB", async () => {
    const { stream, state } = countingStream(64 * 1024 * 1024);
    await rejectsWith(() => v.verifyRequest(streamRequest(stream, fx.goodToken)), "body_too_large");
    assert(state.pulled <= 1024 * 1024 + 2 * CHUNK, `pulled ${state.pulled} bytes past the 1 MiB default`);
    assert(state.cancelled, "the body stream was not cancelled");
  });

  await t.run("maxBodyBytes: a Content-Length above the cap is refused without reading", async () => {
    const { stream, state } = countingStream(64 * 1024 * 1024);
    const requestLike = {
      headers: new Headers({ "x-svc-signature": fx.goodToken, "content-length": String(64 * 1024 * 1024) }),
      body: stream,
      arrayBuffer: () => Promise.reject(new Error("arrayBuffer must not be called")),
    };
    await rejectsWith(() => v.verifyRequest(requestLike), "body_too_large");
    assert(state.pulled === 0, `pulled ${state.pulled} bytes despite Content-Length`);
  });

  await t.run("maxBodyBytes: verify/verifySync refuse a buffer or string over the cap before hashing", async () => {
    const vc = new WebhookVerifier({ ...base, maxBodyBytes: 16 });
    const big = fx.goodBody.length > 16 ? fx.goodBody : fx.goodBody + " ".repeat(32);
    await rejectsWith(() => vc.verify(big, fx.goodToken), "body_too_large");
    await rejectsWith(() => vc.verify(enc.encode(big), fx.goodToken), "body_too_large");
    await rejectsWith(() => vc.verify(enc.encode(big).buffer, fx.goodToken), "body_too_large");
    await rejectsWith(() => vc.verifySync(big, fx.goodToken), "body_too_large");
    // The header is checked first: a garbage token over a big body is malformed_signature.
    await rejectsWith(() => vc.verify(big, "garbage"), "malformed_signature");
    // At the cap exactly the body is accepted.
    const exact = new WebhookVerifier({ ...base, maxBodyBytes: enc.encode(fx.goodBody).length });
    await exact.verify(fx.goodBody, fx.goodToken);
  });

  await t.run("maxBodyBytes must be a whole number of at least 1 (invalid_options)", async () => {
    for (const bad of [0, -1, 1.5, "10", Infinity]) {
      await rejectsWith(() => new WebhookVerifier({ ...base, maxBodyBytes: bad }), "invalid_options");
    }
  });

  return { passed: t.passed, failed: t.failed };
}
