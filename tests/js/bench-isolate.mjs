// The verifiers of the isolate benchmarks (workerd, Chromium), built in the isolate that runs them: docauto's
// `verify`, `verifySync` and a jose verifier doing the same work (jwtVerify with a local key set, SHA-256 of the
// body with WebCrypto, envelope-vs-claims). Bundled by tests/js/bench.mjs; `input` is what its benchInput() returns. Two
// references bound what any WebCrypto verifier can reach: `minimal`, the same checks written out in plain JS with
// nothing else (no options, no key lookup, no error types, the CryptoKey imported once), and `ceiling`.
import { WebhookVerifier } from "docauto/webhooks";
import { base64url, createLocalJWKSet, jwtVerify } from "jose";

export function runners(input, now) {
  const { jwks, body, token } = input;
  const v = new WebhookVerifier({ jwks, now });
  const keySet = createLocalJWKSet(jwks);
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const jose = async () => {
    const { payload } = await jwtVerify(token, keySet, {
      algorithms: ["ES256"], issuer: "svc-process", currentDate: new Date(now * 1000),
    });
    const digest = base64url.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(body))));
    if (digest !== payload.bodySha256) throw new Error("body");
    const e = JSON.parse(body);
    if (e.eventId !== payload.eventId || e.type !== payload.type || e.processingId !== payload.processingId) {
      throw new Error("claims");
    }
    return e;
  };
  const verify = () => v.verify(body, token);
  // No host crypto answers synchronously in an isolate: verifySync checks the signature with p256 in wasm.
  const verifySync = () => v.verifySync(body, token);
  const algorithm = { name: "ECDSA", hash: "SHA-256" };
  let bare;
  const ceiling = async () => {
    bare ??= await bareVerify(jwks.keys[0], token, encoder);
    if (!(await crypto.subtle.verify(algorithm, bare.key, bare.signature, bare.data))) throw new Error("ceiling");
  };
  const minimal = async () => {
    bare ??= await bareVerify(jwks.keys[0], token, encoder);
    const [h, p, sig] = token.split(".");
    const header = JSON.parse(decoder.decode(base64url.decode(h)));
    if (header.alg !== "ES256" || header.kid !== jwks.keys[0].kid) throw new Error("header");
    if (!(await crypto.subtle.verify(algorithm, bare.key, base64url.decode(sig), encoder.encode(`${h}.${p}`)))) {
      throw new Error("signature");
    }
    const claims = JSON.parse(decoder.decode(base64url.decode(p)));
    if (claims.iss !== "svc-process" || !(now <= claims.exp + 5) || !(claims.iat <= now + 5)) throw new Error("time");
    const digest = base64url.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(body))));
    if (digest !== claims.bodySha256) throw new Error("body");
    const e = JSON.parse(body);
    if (e.eventId !== claims.eventId || e.type !== claims.type || e.processingId !== claims.processingId) {
      throw new Error("claims");
    }
    return e;
  };
  return { jose, verify, verifySync, ceiling, minimal };
}

async function bareVerify(jwk, token, encoder) {
  const key = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const dot = token.lastIndexOf(".");
  return { key, signature: base64url.decode(token.slice(dot + 1)), data: encoder.encode(token.slice(0, dot)) };
}

/** Runs `fn` `n` times in sequence. */
export async function loop(fn, n) {
  for (let i = 0; i < n; i++) await fn();
}
