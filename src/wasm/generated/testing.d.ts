// Generated from the Rust types by `cargo xtask types` (ts-rs, see src/typegen.rs): do not edit.

/**
 * The event as the caller gives it: the envelope's fields, `eventId` and `occurredAt` optional, `data` as JSON text
 * (the caller's own serialization, kept byte for byte in the body). In JS, `TestEvent`: `data` is an object (its
 * `JSON.stringify` is signed), and the five names are the only ones accepted ([`EVENT_FIELDS`]).
 */
export type TestEvent = {
  /**
   * `type`, such as `agent_run.completed`.
   */
  type: WebhookEvent["type"] | (string & {});
  /**
   * `processingId`, the run (or space) the event is about.
   */
  processingId: string;
  /**
   * `eventId`; default: `evt_` and 24 random letters and digits.
   */
  eventId?: string;
  /**
   * `occurredAt`, an RFC 3339 timestamp; default: the signer's clock, in UTC with milliseconds.
   */
  occurredAt?: string;
  /**
   * `data`, an object; `{}` when absent.
   */
  data?: Record<string, unknown>;
};

/**
 * A signed delivery: the exact body text and the `x-svc-signature` value.
 */
export type SignedTestEvent = {
  /**
   * The envelope as sent (UTF-8 JSON text); `bodySha256` is the hash of these bytes.
   */
  body: string;
  /**
   * The compact JWS for the `x-svc-signature` header.
   */
  signature: string;
};
