// The JS half of host_crypto.rs: a kid's WebCrypto key, usable while its import is still running, so that the first
// `verify` of a key the verifier holds takes the same path as every later one (WebCrypto's Promise continued with
// the core's checks) instead of a Rust future that waits for the import. Both functions are imported `catch`; they
// only call WebCrypto on values of this module's making (the JWK, the algorithm objects, views of wasm memory).
//
// wasm-bindgen copies this file next to the glue (snippets/docauto-<hash>/src/wasm/host_crypto.js). Plain ESM.

/**
 * Starts importing `jwk` as an ECDSA P-256 verification key: `{ key, pending }`, where `key` is the `CryptoKey` once
 * imported and `pending` the import's Promise. A failed import is seen by each `verifyWith` chained on it.
 */
export function importKey(subtle, jwk, params) {
  const entry = { key: undefined, pending: undefined };
  entry.pending = subtle.importKey("jwk", jwk, params, false, ["verify"]).then((key) => (entry.key = key));
  entry.pending.catch(() => {});
  return entry;
}

/**
 * WebCrypto's verdict on `signature` over `data` under the entry's key: at once when it is imported, else once the
 * import has finished. `signature` and `data` are views of wasm memory: WebCrypto copies them when called, and they
 * are copied here before waiting for the import.
 */
export function verifyWith(subtle, params, entry, signature, data) {
  if (entry.key !== undefined) return subtle.verify(params, entry.key, signature, data);
  const signatureCopy = signature.slice();
  const dataCopy = data.slice();
  return entry.pending.then((key) => subtle.verify(params, key, signatureCopy, dataCopy));
}

/**
 * `verifyWith`, and WebCrypto's SHA-256 of `body` beside it: `[verdict, digest]`, where either is `undefined` when
 * its call failed (the core then takes p256's verdict, or hashes the body itself). Asked for a key's first
 * delivery only, whose import is running anyway: later deliveries hash in wasm, where a body this size is cheaper,
 * but the first would compile SHA-256's code for that one call (issue 31). `body` is a view of wasm memory, copied
 * here before anything waits.
 */
export function verifyAndDigest(subtle, params, entry, signature, data, body) {
  const verdict = verifyWith(subtle, params, entry, signature, data).catch(() => undefined);
  const digest = subtle.digest("SHA-256", body.slice()).then((d) => new Uint8Array(d), () => undefined);
  return Promise.all([verdict, digest]);
}
