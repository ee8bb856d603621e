// `docauto/testing`: what `TestSigner` makes is checked with jose (an independent JOSE implementation), not only with
// our own verifier. Runs in Node and Deno (tests/js/run-testing.mjs) and workerd (tests/js/run-testing-workerd.mjs); needs
// only WebCrypto and the Fetch API `Request`.
// `runTestingSuite({ testing, webhooks, jose }, log)` prints one line per case and returns { passed, failed }.
import { Checks, assert, jsonEqual, rejectsWith } from "./suite.mjs";

const enc = new TextEncoder();
const URL_ = "https://my.app/hooks";
const FIXED = 1_800_000_000; // 2027-01-15T08:00:00Z
const EVENT = {
  type: "agent_run.completed",
  processingId: "agr_1",
  data: { object: "agent_run", id: "agr_1", status: "completed", progress: { tasks: { total: 2, completed: 2 } } },
};

function b64url(bytes) {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function sha256(text) {
  return b64url(await crypto.subtle.digest("SHA-256", enc.encode(text)));
}

/** What the spec's verification steps check, done with jose: returns { payload, protectedHeader, envelope }. */
async function joseVerify(jose, signer, { body, signature }, options = {}) {
  const { payload, protectedHeader } = await jose.jwtVerify(signature, jose.createLocalJWKSet(signer.jwks), {
    algorithms: ["ES256"],
    issuer: "svc-process",
    ...options,
  });
  assert(payload.bodySha256 === (await sha256(body)), "bodySha256 is not the SHA-256 of the body bytes");
  const envelope = JSON.parse(body);
  for (const [claim, field] of [["eventId", "eventId"], ["type", "type"], ["processingId", "processingId"]]) {
    assert(payload[claim] === envelope[field], `claim ${claim} ${payload[claim]} differs from the envelope's ${envelope[field]}`);
  }
  return { payload, protectedHeader, envelope };
}

async function throwsJose(p, code) {
  let err;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert(err !== undefined, `jose accepted it (expected ${code})`);
  assert(err.code === code, `jose failed with ${err.code} (${err.message}), expected ${code}`);
}

export async function runTestingSuite({ testing, webhooks, jose }, log = console.log) {
  const t = new Checks(log);
  const { TestSigner, WebhookVerificationError } = testing;
  const { WebhookVerifier } = webhooks;

  await t.run("docauto/testing exports TestSigner and its error class, no verifier and no init function", () => {
    assert(typeof TestSigner === "function" && typeof TestSigner.generate === "function", "no TestSigner.generate");
    assert(typeof WebhookVerificationError === "function", "no WebhookVerificationError");
    assert(!("WebhookVerifier" in testing) && !("DocAuto" in testing), "exports another use's class");
    assert(!("initSync" in testing) && !("default" in testing), "init machinery is exported");
  });

  await t.run("generate(): a new P-256 key with a random kid; jwks is the public key set only", async () => {
    const a = await TestSigner.generate();
    const b = await TestSigner.generate();
    assert(/^test-[0-9a-z]{16}$/.test(a.kid), `kid ${a.kid}`);
    assert(a.kid !== b.kid, "two signers share a kid");
    const [key, ...more] = a.jwks.keys;
    assert(more.length === 0, "jwks holds more than one key");
    assert(jsonEqual(Object.keys(key).sort(), ["alg", "crv", "kid", "kty", "use", "x", "y"]), `members ${Object.keys(key)}`);
    assert(key.kty === "EC" && key.crv === "P-256" && key.alg === "ES256" && key.use === "sig" && key.kid === a.kid, JSON.stringify(key));
    assert(key.x !== b.jwks.keys[0].x, "two signers share a key");
    const imported = await jose.importJWK(key, "ES256");
    assert(imported.type === "public", "jose does not read the key as a public key");
  });

  await t.run("sign(): jose verifies the token; header {alg, kid}; every claim of the spec, exp = iat + 300", async () => {
    const signer = await TestSigner.generate();
    const before = Math.floor(Date.now() / 1000);
    const signed = await signer.sign(EVENT);
    const after = Math.ceil(Date.now() / 1000);
    assert(jsonEqual(Object.keys(signed).sort(), ["body", "signature"]), `sign() gave ${Object.keys(signed)}`);
    assert(typeof signed.body === "string", "body is not a string");
    const { payload, protectedHeader } = await joseVerify(jose, signer, signed);
    assert(jsonEqual(protectedHeader, { alg: "ES256", kid: signer.kid }), `header ${JSON.stringify(protectedHeader)}`);
    assert(
      jsonEqual(Object.keys(payload), ["iss", "processingId", "eventId", "type", "bodySha256", "iat", "exp"]),
      `claims ${Object.keys(payload)}`,
    );
    assert(payload.iss === "svc-process" && payload.processingId === "agr_1" && payload.type === "agent_run.completed", JSON.stringify(payload));
    assert(Number.isInteger(payload.iat) && payload.iat >= before && payload.iat <= after, `iat ${payload.iat} not in [${before}, ${after}]`);
    assert(payload.exp === payload.iat + 300, `exp ${payload.exp} is not iat + 300`);
  });

  await t.run("the body is the five-field envelope; eventId and occurredAt are made when not given", async () => {
    const signer = await TestSigner.generate();
    const before = Date.now();
    const { body } = await signer.sign(EVENT);
    const after = Date.now();
    const envelope = JSON.parse(body);
    assert(jsonEqual(Object.keys(envelope), ["eventId", "type", "processingId", "occurredAt", "data"]), `fields ${Object.keys(envelope)}`);
    assert(/^evt_[0-9a-z]{24}$/.test(envelope.eventId), `eventId ${envelope.eventId}`);
    assert(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(envelope.occurredAt), `occurredAt ${envelope.occurredAt}`);
    const at = Date.parse(envelope.occurredAt);
    assert(at >= before - 1 && at <= after, `occurredAt ${envelope.occurredAt} is not the signing time`);
    assert(jsonEqual(envelope.data, EVENT.data), "data differs");
    const again = JSON.parse((await signer.sign(EVENT)).body);
    assert(again.eventId !== envelope.eventId, "two signatures share an eventId");
  });

  await t.run("a given eventId and occurredAt are kept, and data keeps its key order", async () => {
    const signer = await TestSigner.generate();
    const event = { eventId: "evt_given", occurredAt: "2026-01-02T03:04:05.678Z", type: "space.expired", processingId: "spc_1", data: { z: 1, a: [true, null] } };
    const signed = await signer.sign(event);
    assert(
      signed.body === '{"eventId":"evt_given","type":"space.expired","processingId":"spc_1","occurredAt":"2026-01-02T03:04:05.678Z","data":{"z":1,"a":[true,null]}}',
      signed.body,
    );
    const { payload } = await joseVerify(jose, signer, signed);
    assert(payload.eventId === "evt_given", `eventId claim ${payload.eventId}`);
  });

  await t.run("our WebhookVerifier (docauto/webhooks) accepts what sign() makes, with the signer's jwks", async () => {
    const signer = await TestSigner.generate();
    const verifier = new WebhookVerifier({ jwks: signer.jwks });
    const { body, signature } = await signer.sign(EVENT);
    const event = await verifier.verify(body, signature);
    assert(jsonEqual(event, JSON.parse(body)), `event ${JSON.stringify(event)}`);
    const sync = verifier.verifySync(enc.encode(body), signature);
    assert(sync.eventId === event.eventId, "verifySync disagrees");
  });

  await t.run("request(): a POST Request with the body, content-type and x-svc-signature; verifyRequest accepts it", async () => {
    const signer = await TestSigner.generate();
    const request = await signer.request(URL_, EVENT);
    assert(request instanceof Request, "not a Request");
    assert(request.method === "POST" && request.url === URL_, `${request.method} ${request.url}`);
    assert(request.headers.get("content-type") === "application/json", `content-type ${request.headers.get("content-type")}`);
    const signature = request.headers.get("x-svc-signature");
    const body = await request.clone().text();
    await joseVerify(jose, signer, { body, signature });
    const event = await new WebhookVerifier({ jwks: signer.jwks }).verifyRequest(request);
    assert(event.type === "agent_run.completed" && event.processingId === "agr_1" && /^evt_/.test(event.eventId), JSON.stringify(event));
  });

  await t.run("a tampered body: jose's bodySha256 check and our verifier (body_mismatch) both refuse it", async () => {
    const signer = await TestSigner.generate();
    const signed = await signer.sign(EVENT);
    const body = signed.body.replace('"status":"completed"', '"status":"failed"');
    assert(body !== signed.body, "the tamper did nothing");
    let err;
    try {
      await joseVerify(jose, signer, { body, signature: signed.signature });
    } catch (e) {
      err = e;
    }
    assert(err && /bodySha256/.test(err.message), `jose check did not catch it: ${err}`);
    await rejectsWith(new WebhookVerifier({ jwks: signer.jwks }).verify(body, signed.signature), "body_mismatch");
  });

  await t.run("a tampered signature or another signer's key: jose and our verifier both refuse it", async () => {
    const signer = await TestSigner.generate();
    const other = await TestSigner.generate({ kid: signer.kid });
    const signed = await signer.sign(EVENT);
    const [h, p, s] = signed.signature.split(".");
    const flipped = `${h}.${p}.${s.slice(0, 10)}${s[10] === "A" ? "B" : "A"}${s.slice(11)}`;
    const foreign = await other.sign(EVENT);
    for (const token of [flipped, foreign.signature]) {
      const body = token === flipped ? signed.body : foreign.body;
      await throwsJose(jose.jwtVerify(token, jose.createLocalJWKSet(signer.jwks), { algorithms: ["ES256"] }), "ERR_JWS_SIGNATURE_VERIFICATION_FAILED");
      await rejectsWith(new WebhookVerifier({ jwks: signer.jwks }).verify(body, token), "invalid_signature");
    }
  });

  await t.run("a fixed clock and kid: iat, exp and occurredAt follow it; jose and our verifier expire it after 300 s", async () => {
    const signer = await TestSigner.generate({ kid: "fixture-key", now: FIXED });
    assert(signer.kid === "fixture-key", `kid ${signer.kid}`);
    const signed = await signer.sign(EVENT);
    const at = (s) => new Date(s * 1000);
    const { payload, protectedHeader, envelope } = await joseVerify(jose, signer, signed, { currentDate: at(FIXED + 299), clockTolerance: 0 });
    assert(protectedHeader.kid === "fixture-key", `kid ${protectedHeader.kid}`);
    assert(payload.iat === FIXED && payload.exp === FIXED + 300, `iat ${payload.iat} exp ${payload.exp}`);
    assert(envelope.occurredAt === "2027-01-15T08:00:00.000Z", `occurredAt ${envelope.occurredAt}`);
    await throwsJose(
      jose.jwtVerify(signed.signature, jose.createLocalJWKSet(signer.jwks), { currentDate: at(FIXED + 301), clockTolerance: 0 }),
      "ERR_JWT_EXPIRED",
    );
    const verifier = (now) => new WebhookVerifier({ jwks: signer.jwks, now, clockToleranceSeconds: 0 });
    await verifier(FIXED + 300).verify(signed.body, signed.signature);
    await rejectsWith(verifier(FIXED + 301).verify(signed.body, signed.signature), "expired");
  });

  await t.run("a clock function is read at each signature", async () => {
    let now = FIXED;
    const signer = await TestSigner.generate({ now: () => now });
    const first = await joseVerify(jose, signer, await signer.sign(EVENT), { currentDate: new Date(FIXED * 1000) });
    now = FIXED + 1000.9;
    const second = await joseVerify(jose, signer, await signer.sign(EVENT), { currentDate: new Date(now * 1000) });
    assert(first.payload.iat === FIXED && second.payload.iat === FIXED + 1000, `iat ${first.payload.iat}, ${second.payload.iat}`);
    assert(second.envelope.occurredAt === "2027-01-15T08:16:40.900Z", `occurredAt ${second.envelope.occurredAt}`);
  });

  await t.run("privateJwk restores the same key: jose verifies its tokens with the first signer's jwks", async () => {
    const signer = await TestSigner.generate();
    const jwk = signer.privateJwk;
    assert(typeof jwk.d === "string" && jwk.kid === signer.kid, "privateJwk lacks d or kid");
    const restored = await TestSigner.generate({ privateJwk: jwk });
    assert(restored.kid === signer.kid && jsonEqual(restored.jwks, signer.jwks), "restored key differs");
    await joseVerify(jose, signer, await restored.sign(EVENT));
    const privateKey = await jose.importJWK(jwk, "ES256");
    assert(privateKey.type === "private", "jose does not read privateJwk as a private key");
  });

  await t.run("bad events reject with WebhookVerificationError invalid_input; bad options with invalid_options", async () => {
    const signer = await TestSigner.generate();
    for (const event of [
      undefined,
      "text",
      { processingId: "agr_1" },
      { type: "agent_run.completed" },
      { type: 1, processingId: "agr_1" },
      { ...EVENT, data: [] },
      { ...EVENT, data: "x" },
      { ...EVENT, metadata: {} },
    ]) {
      const err = await rejectsWith(signer.sign(event), "invalid_input");
      assert(err instanceof WebhookVerificationError, "not an instance of the entry's WebhookVerificationError");
    }
    await rejectsWith(signer.request(URL_, { type: "t" }), "invalid_input");
    await rejectsWith(TestSigner.generate({ clock: 1 }), "invalid_options");
    await rejectsWith(TestSigner.generate({ kid: 7 }), "invalid_options");
    await rejectsWith(TestSigner.generate({ privateJwk: { kty: "EC", crv: "P-256", kid: "k" } }), "invalid_input");
  });

  return { passed: t.passed, failed: t.failed };
}
