/** Options of `TestSigner.generate(...)`. */
export interface TestSignerOptions {
  /** Key id of the key (the JOSE header's `kid`). Default: `test-` and 16 random letters and digits. */
  kid?: string;
  /** Current time in epoch seconds, or a function returning it: sets `iat`, `exp` and the default `occurredAt`. */
  now?: number | (() => number);
  /** A key saved from `signer.privateJwk`, instead of a new one (its `kid` unless `kid` is given). */
  privateJwk?: JsonWebKey;
}
