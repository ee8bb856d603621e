// The JS half of host_crypto.rs: a kid's WebCrypto key, usable while its import is still running, so that the first
// `verify` of a key the verifier holds takes the same path as every later one (WebCrypto's Promise continued with
// the core's checks) instead of a Rust future that waits for the import; and `node:crypto`'s key for the same point.
// Every function is imported `catch`; they only call the host's crypto on values of this module's making (the key's
// point, the algorithm objects below, views of wasm memory). The algorithm objects and the key's encoding are
// constants here, not built from wasm a property at a time, which cost a cold start's first delivery about 50
// crossings of the boundary.
//
// wasm-bindgen copies this file next to the glue (snippets/docauto-<hash>/src/wasm/host_crypto.js). Plain ESM.

const IMPORT = { name: "ECDSA", namedCurve: "P-256" };
const VERIFY = { name: "ECDSA", hash: "SHA-256" };
// DER of a P-256 SubjectPublicKeyInfo up to its BIT STRING's contents: id-ecPublicKey, prime256v1, then the
// uncompressed point (0x04, x, y).
const SPKI_PREFIX = [
  0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
  0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
];

/** `globalThis.crypto.subtle` when the runtime has it (browsers expose it only in secure contexts), else undefined. */
export function hostSubtle() {
  const crypto = globalThis.crypto;
  const subtle = crypto !== null && typeof crypto === "object" ? crypto.subtle : undefined;
  return subtle !== null && typeof subtle === "object" ? subtle : undefined;
}

/** The uncompressed point `04 || x || y` of `point` (`x || y`, 64 bytes; a view of wasm memory, copied here). */
function uncompressed(point) {
  const raw = new Uint8Array(65);
  raw[0] = 4;
  raw.set(point, 1);
  return raw;
}

/**
 * Starts importing the P-256 point `point` (`x || y`, a view of wasm memory) as an ECDSA verification key:
 * `{ key, pending }`, where `key` is the `CryptoKey` once imported and `pending` the import's Promise. A failed
 * import is seen by each `verifyWith` chained on it.
 */
export function importKey(subtle, point) {
  const entry = { key: undefined, pending: undefined };
  entry.pending = subtle.importKey("raw", uncompressed(point), IMPORT, false, ["verify"]).then((key) => (entry.key = key));
  entry.pending.catch(() => {});
  return entry;
}

/**
 * WebCrypto's verdict on `signature` over `data` under the entry's key: at once when it is imported, else once the
 * import has finished. `signature` and `data` are views of wasm memory: WebCrypto copies them when called, and they
 * are copied here before waiting for the import.
 */
export function verifyWith(subtle, entry, signature, data) {
  if (entry.key !== undefined) return subtle.verify(VERIFY, entry.key, signature, data);
  const signatureCopy = signature.slice();
  const dataCopy = data.slice();
  return entry.pending.then((key) => subtle.verify(VERIFY, key, signatureCopy, dataCopy));
}

/**
 * `verifyWith`, and WebCrypto's SHA-256 of `body` beside it: `[verdict, digest]`, where either is `undefined` when
 * its call failed (the core then takes p256's verdict, or hashes the body itself). Asked for a key's first
 * delivery only, whose import is running anyway: later deliveries hash in wasm, where a body this size is cheaper,
 * but the first would compile SHA-256's code for that one call. `body` is a view of wasm memory, copied
 * here before anything waits.
 */
export function verifyAndDigest(subtle, entry, signature, data, body) {
  const verdict = verifyWith(subtle, entry, signature, data).catch(() => undefined);
  const digest = subtle.digest("SHA-256", body.slice()).then((d) => new Uint8Array(d), () => undefined);
  return Promise.all([verdict, digest]);
}

/**
 * `node:crypto`'s verify options for the P-256 point `point` (`x || y`, a view of wasm memory): its `KeyObject`
 * (made from the point's SubjectPublicKeyInfo) with `r || s` signatures. Throws what `createPublicKey` throws.
 */
export function nodeKey(crypto, point) {
  const der = new Uint8Array(SPKI_PREFIX.length + 64);
  der.set(SPKI_PREFIX);
  der.set(point, SPKI_PREFIX.length);
  return { key: crypto.createPublicKey({ key: der, format: "der", type: "spki" }), dsaEncoding: "ieee-p1363" };
}
