// Mints the test tokens with `jose` (an independent JOSE implementation) and writes them, with the expected outcome
// of each case, to target/docauto-js/fixtures.json. Every runtime's suite reads that one file.
//
// Tokens follow the spec's Signature section: JOSE header {alg: "ES256", kid}; claims iss "svc-process",
// processingId, eventId, type, bodySha256 = base64url(SHA-256(raw body bytes)), iat, exp = iat + 300.
import { SignJWT, exportJWK, exportSPKI, generateKeyPair } from "jose";
import { createHash, webcrypto } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const OUT_DIR = fileURLToPath(new URL("../../target/docauto-js/", import.meta.url));
export const FIXTURES = OUT_DIR + "fixtures.json";

/** Fixed verification time (epoch seconds) used by every suite through the `now` option. */
const NOW = 1_790_000_000;
const ISS = "svc-process";

const b64u = (bytes) => Buffer.from(bytes).toString("base64url");
const sha256b64u = (text) => createHash("sha256").update(Buffer.from(text, "utf8")).digest("base64url");

/** Sample envelopes (one per agent-run type, space.expired, and a type whose data is not typed). */
function envelopes() {
  const run = (id, status, extra) => ({ object: "agent_run", id, status, metadata: { orderId: "ord_42" }, ...extra });
  const env = (n, type, processingId, data) => ({
    eventId: `evt_${String(n).padStart(4, "0")}`,
    type,
    processingId,
    occurredAt: "2026-09-21T12:00:00.000Z",
    data,
  });
  return [
    env(1, "agent_run.waiting", "agr_1", run("agr_1", "waiting", {
      waiting: { approvals: 1, tasks: 0, summary: "Approve the supplier invoice of Zoë Müller (文書 42)" },
    })),
    env(2, "agent_run.approval_requested", "agr_2", run("agr_2", "waiting", {
      approval: { id: "apr_9", kind: "before", action: "send_email", requestedAt: "2026-09-21T11:59:58.000Z" },
    })),
    env(3, "agent_run.task_ready", "agr_3", run("agr_3", "waiting", {
      task: { id: "tsk_1", title: "Check the scan", executor: "human", status: "ready" },
    })),
    env(4, "agent_run.completed", "agr_4", run("agr_4", "completed", {
      progress: { tasks: { total: 3, completed: 3 } }, result: { total: 1234.5, currency: "EUR" },
      output: { files: [{ url: "https://files.example/out.pdf", name: "out.pdf" }] },
    })),
    env(5, "agent_run.failed", "agr_5", run("agr_5", "cancelled", {
      error: { code: "run_cancelled", message: "Cancelled by the caller" },
    })),
    env(6, "space.expired", "spc_1", { spaceId: "spc_1", name: "Q3 invoices", expiresAt: "2026-09-21T00:00:00.000Z" }),
    env(7, "processing.completed", "prc_7", { anything: ["kept", "as", "object"] }),
  ];
}

function claimsFor(body, envelope, over = {}) {
  const iat = NOW - 10;
  const c = {
    iss: ISS,
    processingId: envelope.processingId,
    eventId: envelope.eventId,
    type: envelope.type,
    bodySha256: sha256b64u(body),
    iat,
    exp: iat + 300,
    ...over,
  };
  for (const [k, v] of Object.entries(c)) if (v === undefined) delete c[k];
  return c;
}

/** A token minted by jose's SignJWT (the honest sender). */
async function mint(key, kid, claims) {
  return new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid }).sign(key);
}

/** A token with an arbitrary JOSE header, signed by WebCrypto (jose refuses to sign some forgeries, e.g. crit). */
async function signRaw(privateKey, header, claims) {
  const input = `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(claims))}`;
  const sig = await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, privateKey, Buffer.from(input));
  return `${input}.${b64u(new Uint8Array(sig))}`;
}

/** Raw r||s (64 bytes) to an ASN.1 DER ECDSA-Sig-Value. */
function derFromRaw(raw) {
  const int = (b) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    let v = b.subarray(i);
    if (v[0] & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
    return Buffer.concat([Buffer.from([0x02, v.length]), v]);
  };
  const r = int(raw.subarray(0, 32));
  const s = int(raw.subarray(32));
  return Buffer.concat([Buffer.from([0x30, r.length + s.length]), r, s]);
}

const replaceHeader = (token, header) => `${b64u(JSON.stringify(header))}.${token.split(".").slice(1).join(".")}`;

async function main() {
  const k1 = await generateKeyPair("ES256", { extractable: true });
  const k2 = await generateKeyPair("ES256", { extractable: true });
  const attacker = await generateKeyPair("ES256", { extractable: true });
  const rotated = await generateKeyPair("ES256", { extractable: true });
  const pub = async (k, kid) => ({ ...(await exportJWK(k.publicKey)), kid, use: "sig", alg: "ES256" });
  const jwks = { keys: [await pub(k1, "k1"), await pub(k2, "k2")] };
  const rotatedJwk = await pub(rotated, "k3");

  const cases = [];
  const ok = (name, body, header, envelope, extra = {}) =>
    cases.push({ name, body, header, expect: { ok: true, envelope }, ...extra });
  const bad = (name, body, header, code, extra = {}) => cases.push({ name, body, header, expect: { code }, ...extra });

  const all = envelopes();
  for (const e of all) {
    const body = JSON.stringify(e);
    ok(`valid ${e.type} is accepted`, body, await mint(k1.privateKey, "k1", claimsFor(body, e)), e);
  }
  const e0 = all[0];
  const body0 = JSON.stringify(e0);
  const good = await mint(k1.privateKey, "k1", claimsFor(body0, e0));
  ok("body given as Uint8Array is accepted", body0, good, e0, { bodyAs: "uint8array" });
  ok("body given as ArrayBuffer is accepted", body0, good, e0, { bodyAs: "arraybuffer" });
  ok("verifySync accepts a valid token", body0, good, e0, { method: "verifySync" });
  ok("verifyRequest reads the raw body and x-svc-signature", body0, good, e0, { method: "verifyRequest" });
  ok("second key of the set is used by kid", body0, await mint(k2.privateKey, "k2", claimsFor(body0, e0)), e0);
  ok("surrounding spaces in the header are tolerated", body0, ` ${good} `, e0);
  const lateIat = NOW - 303;
  ok("exp within the 5 s tolerance is accepted", body0,
    await mint(k1.privateKey, "k1", claimsFor(body0, e0, { iat: lateIat, exp: lateIat + 300 })), e0);

  bad("tampered body is body_mismatch", body0.replace("Approve", "Apprave"), good, "body_mismatch");
  bad("re-serialized body (same JSON, other whitespace) is body_mismatch", JSON.stringify(e0, null, 2), good, "body_mismatch");
  bad("tampered body via verifySync is body_mismatch", body0 + " ", good, "body_mismatch", { method: "verifySync" });
  bad("wrong key under a known kid is invalid_signature", body0,
    await mint(attacker.privateKey, "k1", claimsFor(body0, e0)), "invalid_signature");
  bad("wrong key via verifySync is invalid_signature", body0,
    await mint(attacker.privateKey, "k1", claimsFor(body0, e0)), "invalid_signature", { method: "verifySync" });
  bad("unknown kid is unknown_key", body0, await mint(attacker.privateKey, "nope", claimsFor(body0, e0)), "unknown_key");
  const [h, p] = good.split(".");
  bad("alg none is unsupported_algorithm", body0, `${b64u(JSON.stringify({ alg: "none", kid: "k1" }))}.${p}.`,
    "unsupported_algorithm");
  const spki = await exportSPKI(k1.publicKey);
  const hs = await new SignJWT(claimsFor(body0, e0)).setProtectedHeader({ alg: "HS256", kid: "k1" })
    .sign(new TextEncoder().encode(spki));
  bad("HS256 keyed with the public key is unsupported_algorithm", body0, hs, "unsupported_algorithm");
  bad("ES256 signature relabelled ES384 is unsupported_algorithm", body0,
    replaceHeader(good, { alg: "ES384", kid: "k1" }), "unsupported_algorithm");
  bad("ES256 signature relabelled RS256 is unsupported_algorithm", body0,
    replaceHeader(good, { alg: "RS256", kid: "k1" }), "unsupported_algorithm");
  const raw = Buffer.from(good.split(".")[2], "base64url");
  bad("DER-encoded signature is malformed_signature", body0, `${h}.${p}.${b64u(derFromRaw(raw))}`, "malformed_signature");
  bad("truncated signature is malformed_signature", body0, `${h}.${p}.${b64u(raw.subarray(0, 63))}`, "malformed_signature");
  // A header naming a member twice, signed by the real key: a last-wins reader sees ES256 (and would verify it), a
  // first-wins reader HS256. Refused as malformed whatever the signature (RFC 7515 section 4 allows refusing).
  const signInput = async (input) => Buffer.from(await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" },
    k1.privateKey, Buffer.from(input)));
  for (const [what, header] of [["alg", '{"alg":"HS256","alg":"ES256","kid":"k1"}'], ["kid", '{"alg":"ES256","kid":"nope","kid":"k1"}']]) {
    const input = `${b64u(header)}.${p}`;
    bad(`JOSE header naming ${what} twice is malformed_signature`, body0, `${input}.${b64u(await signInput(input))}`,
      "malformed_signature");
  }
  // Scalar forgeries (the shapes Wycheproof's must-fail P1363 vectors probe): r or s zero, equal to the group order n
  // or above it. The core refuses them before any host (node:crypto, WebCrypto, p256) is asked.
  const n = Buffer.from("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", "hex");
  const [r0, s0] = [raw.subarray(0, 32), raw.subarray(32)];
  const zero = Buffer.alloc(32);
  const ones = Buffer.alloc(32, 0xff);
  for (const [what, r, s] of [["r = 0", zero, s0], ["s = 0", r0, zero], ["r = n", n, s0], ["s = n", r0, n],
    ["r = 2^256 - 1", ones, s0], ["s = 2^256 - 1", r0, ones]]) {
    bad(`signature with ${what} is invalid_signature`, body0, `${h}.${p}.${b64u(Buffer.concat([r, s]))}`,
      "invalid_signature", { scalarForgery: true });
  }
  // s' = n - s verifies as s does (ECDSA malleability; Wycheproof tcId 1 "signature malleability" is valid): every
  // host must give the same answer as p256, which accepts it.
  const highS = Buffer.from((BigInt(`0x${n.toString("hex")}`) - BigInt(`0x${s0.toString("hex")}`)).toString(16).padStart(64, "0"), "hex");
  ok("the s' = n - s twin of a valid signature is accepted, as by p256 (ECDSA malleability)", body0,
    `${h}.${p}.${b64u(Buffer.concat([r0, highS]))}`, e0);
  ok("the s' = n - s twin via verifySync is accepted", body0, `${h}.${p}.${b64u(Buffer.concat([r0, highS]))}`, e0,
    { method: "verifySync" });
  bad("expired token is expired", body0,
    await mint(k1.privateKey, "k1", claimsFor(body0, e0, { iat: NOW - 400, exp: NOW - 100 })), "expired");
  // The order of verdicts: the signature first, then the claims and the clock, then the body. A verifier that reads
  // the claims or hashes the body while the host checks the signature must still answer in this order.
  bad("wrong key and expired is invalid_signature (the signature is judged first)", body0,
    await mint(attacker.privateKey, "k1", claimsFor(body0, e0, { iat: NOW - 400, exp: NOW - 100 })), "invalid_signature");
  bad("wrong key and a tampered body is invalid_signature", body0.replace("Approve", "Apprave"),
    await mint(attacker.privateKey, "k1", claimsFor(body0, e0)), "invalid_signature");
  bad("expired and a tampered body is expired (the clock before the body)", body0.replace("Approve", "Apprave"),
    await mint(k1.privateKey, "k1", claimsFor(body0, e0, { iat: NOW - 400, exp: NOW - 100 })), "expired");
  bad("iat far in the future is not_yet_valid", body0,
    await mint(k1.privateKey, "k1", claimsFor(body0, e0, { iat: NOW + 3600, exp: NOW + 3900 })), "not_yet_valid");
  bad("nbf in the future is not_yet_valid", body0,
    await mint(k1.privateKey, "k1", claimsFor(body0, e0, { nbf: NOW + 600 })), "not_yet_valid");
  bad("wrong issuer is wrong_issuer", body0,
    await mint(k1.privateKey, "k1", claimsFor(body0, e0, { iss: "svc-other" })), "wrong_issuer");
  for (const claim of ["iss", "exp", "iat", "eventId", "type", "processingId", "bodySha256"]) {
    bad(`missing ${claim} is missing_claim`, body0,
      await signRaw(k1.privateKey, { alg: "ES256", kid: "k1" }, claimsFor(body0, e0, { [claim]: undefined })),
      "missing_claim");
  }
  bad("exp of the wrong type is missing_claim", body0,
    await signRaw(k1.privateKey, { alg: "ES256", kid: "k1" }, claimsFor(body0, e0, { exp: "soon" })), "missing_claim");
  for (const [claim, value] of [["eventId", "evt_other"], ["type", "agent_run.completed"], ["processingId", "agr_x"]]) {
    bad(`token ${claim} differing from the envelope is claims_mismatch`, body0,
      await mint(k1.privateKey, "k1", claimsFor(body0, e0, { [claim]: value })), "claims_mismatch");
  }
  bad("unknown crit is unsupported_crit", body0,
    await signRaw(k1.privateKey, { alg: "ES256", kid: "k1", crit: ["x-custom"], "x-custom": 1 }, claimsFor(body0, e0)),
    "unsupported_crit");
  bad("header without kid is malformed_signature", body0,
    await signRaw(k1.privateKey, { alg: "ES256" }, claimsFor(body0, e0)), "malformed_signature");
  bad("garbage header is malformed_signature", body0, "this is not a token", "malformed_signature");
  bad("non-base64url segments are malformed_signature", body0, "a*b.c$d.e!f", "malformed_signature");
  bad("JOSE header that is not JSON is malformed_signature", body0, `${b64u("not json")}.${p}.${good.split(".")[2]}`,
    "malformed_signature");
  bad("empty header is malformed_signature", body0, "", "malformed_signature");
  bad("megabyte-long header is malformed_signature", body0, "megabyte", "malformed_signature", { headerRepeat: 1 << 20 });
  const arrBody = "[1,2,3]";
  bad("authentic body that is not an object is malformed_body", arrBody,
    await mint(k1.privateKey, "k1", claimsFor(arrBody, e0)), "malformed_body");
  const textBody = "hello";
  bad("authentic body that is not JSON is malformed_body", textBody,
    await mint(k1.privateKey, "k1", claimsFor(textBody, e0)), "malformed_body");
  // Authentic bodies that are not envelopes: the same verdict whether the body is copied into wasm (serde) or kept
  // in JS and parsed there (Node, Bun, Deno hash it with node:crypto).
  const badUtf8 = Buffer.concat([Buffer.from(body0.slice(0, 20)), Buffer.from([0xc3, 0x28]), Buffer.from(body0.slice(20))]);
  const utf8Claims = { ...claimsFor(body0, e0), bodySha256: createHash("sha256").update(badUtf8).digest("base64url") };
  bad("authentic body bytes that are not UTF-8 are malformed_body", badUtf8.toString("hex"),
    await mint(k1.privateKey, "k1", utf8Claims), "malformed_body", { bodyAs: "hex" });
  const bomBody = `\uFEFF${body0}`;
  bad("authentic body with a byte order mark is malformed_body", bomBody,
    await mint(k1.privateKey, "k1", claimsFor(bomBody, e0)), "malformed_body");
  bad("authentic body with a byte order mark as bytes is malformed_body", bomBody,
    await mint(k1.privateKey, "k1", claimsFor(bomBody, e0)), "malformed_body", { bodyAs: "uint8array" });
  for (const [what, edit] of [["data an array", { data: [] }], ["data null", { data: null }],
    ["no occurredAt", { occurredAt: undefined }], ["eventId a number", { eventId: 7 }]]) {
    const b = JSON.stringify({ ...e0, ...edit });
    bad(`authentic envelope with ${what} is malformed_body`, b, await mint(k1.privateKey, "k1", claimsFor(b, e0)),
      "malformed_body");
  }
  bad("body of the wrong JS type is invalid_input", body0, good, "invalid_input", { bodyAs: "number" });
  bad("header of the wrong JS type is invalid_input", body0, good, "invalid_input", { headerAs: "number" });
  bad("verifyRequest without x-svc-signature is missing_signature", body0, null, "missing_signature",
    { method: "verifyRequest" });

  // For the remote key-set suite: a token under a key that appears only after rotation.
  const rotatedToken = await mint(rotated.privateKey, "k3", claimsFor(body0, e0));

  // For cache-lifetime checks that move `now` forward by hours: a token whose exp lies far ahead.
  const longToken = await mint(k1.privateKey, "k1", claimsFor(body0, e0, { exp: NOW + 100_000 }));
  const longToken2 = await mint(k2.privateKey, "k2", claimsFor(body0, e0, { exp: NOW + 100_000 }));

  const fixtures = {
    now: NOW, jwks, rotatedJwk, goodBody: body0, goodToken: good, goodEnvelope: e0, rotatedToken, longToken, longToken2,
    cases,
  };
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(FIXTURES, JSON.stringify(fixtures, null, 1));
  console.log(`fixtures: ${cases.length} cases written to ${FIXTURES}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
