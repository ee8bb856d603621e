// Generated from the Rust types by `cargo xtask types` (ts-rs, see src/typegen.rs): do not edit.

/**
 * The data options of `new WebhookVerifier(...)`: one of `jwksUrl`, `baseUrl`, `jwks` (or `jwks` with a URL, to
 * seed the cache). Decoded as JS gives them (camelCase; numbers are JS numbers); the handles (`fetch`, `dedupe`,
 * a function `now`) are added by `WebhookVerifierOptions`.
 */
export type WebhookVerifierDataOptions = {
  /**
   * Address of the key set, such as `https://api.example/v1/webhooks/jwks.json` (https; http only on this
   * machine's loopback).
   */
  jwksUrl?: string;
  /**
   * The API's base address; `/v1/webhooks/jwks.json` is appended.
   */
  baseUrl?: string;
  /**
   * Static keys (no I/O), or with a URL the keys saved by `exportKeys()`, trusted until their saved `staleAt`.
   * A JWKS object or its JSON text.
   */
  jwks?: JsonWebKeySet | string;
  /**
   * Allowed clock difference in seconds for `exp`, `iat` and `nbf`, both ways (at least 0). Default 5.
   */
  clockToleranceSeconds?: number;
  /**
   * Current time in epoch seconds, or a function returning it (for tests). A function clock is a handle the wasm
   * layer takes out before decoding, so this field holds only a number.
   */
  now?: number | (() => number);
  /**
   * Freshness of a fetched key set without `max-age`, in seconds (above 0). Default 3600.
   */
  cacheTtlSeconds?: number;
  /**
   * Minimum seconds between two key set fetches (an unknown kid refetches at most this often; at least 0).
   * Default 30.
   */
  cooldownSeconds?: number;
  /**
   * Timeout of one key set fetch, in milliseconds (above 0). Default 5000.
   */
  timeoutMs?: number;
  /**
   * Largest body accepted, in bytes. Default 1048576 (1 MiB). The signature header is checked for shape first;
   * then a `Content-Length` above this is refused without reading, a streamed body is read only up to it (then
   * the stream is cancelled), and a buffer or string above it is refused before hashing. Refusals have code
   * `body_too_large`.
   */
  maxBodyBytes?: number;
  /**
   * Deadline for reading a request's body stream in `verifyRequest`, in milliseconds (above 0). Default 5000. A
   * body still arriving after it is refused with code `body_timeout`, and its stream is cancelled.
   */
  bodyTimeoutMs?: number;
  /**
   * Lease of a dedupe claim, in seconds (1 to 604800). Default 60. `handle` renews it at a third of this while the
   * handler runs; a crashed instance (no renewal) holds the event this long, after which a redelivery is handled.
   */
  claimTtlSeconds?: number;
};

/** Stable codes of a failed verification. */
export type WebhookErrorCode =
  | "invalid_input"
  | "missing_signature"
  | "malformed_signature"
  | "unsupported_algorithm"
  | "unsupported_crit"
  | "unknown_key"
  | "invalid_signature"
  | "missing_claim"
  | "wrong_issuer"
  | "expired"
  | "not_yet_valid"
  | "body_mismatch"
  | "malformed_body"
  | "claims_mismatch"
  | "jwks_unavailable"
  | "invalid_jwks"
  | "invalid_options"
  | "keys_not_loaded"
  | "body_too_large"
  | "body_timeout"
  | "dedupe_unavailable";
