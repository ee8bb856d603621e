/** Options of `TestSigner.generate(...)`. */
export interface TestSignerOptions {
  /** Key id of the key (the JOSE header's `kid`). Default: `test-` and 16 random letters and digits. */
  kid?: string;
  /** Current time in epoch seconds, or a function returning it: sets `iat`, `exp` and the default `occurredAt`. */
  now?: number | (() => number);
  /** A key saved from `signer.privateJwk`, instead of a new one (its `kid` unless `kid` is given). */
  privateJwk?: JsonWebKey;
}

/** An event to sign: the envelope's fields; `eventId` and `occurredAt` are made when absent, `data` defaults to `{}`. */
export interface TestEvent {
  type: WebhookEvent["type"] | (string & {});
  processingId: string;
  data?: Record<string, unknown>;
  /** Default: `evt_` and 24 random letters and digits. */
  eventId?: string;
  /** RFC 3339 timestamp. Default: the signer's clock, in UTC with milliseconds. */
  occurredAt?: string;
}

/** A signed delivery: the exact body text, and the value of its `x-svc-signature` header. */
export interface SignedTestEvent {
  body: string;
  signature: string;
}
