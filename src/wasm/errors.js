// The error classes of the docauto package: plain ESM, no dependencies.
//
// wasm-bindgen copies this file next to the glue (pkg/wasm/snippets/docauto-<hash>/src/wasm/errors.js) and the Rust
// side constructs errors through `createApiError` / `createWebhookError`; the package entries re-export the classes
// from that same file, so `error instanceof NotFoundError` holds for errors the client throws.
//
// `name` is set explicitly on every class (not read from the constructor's name), so minifiers cannot change it.

/** Base class of every error of an API call. */
export class APIError extends Error {
  /**
   * @param {string} message
   * @param {object} [fields] `status`, `code`, `retryable`, `requestId`, `docUrl`, `headers`, `retryAfter`, `outcomeUnknown`.
   */
  constructor(message, fields = {}) {
    super(message);
    this.name = "APIError";
    /** HTTP status, or undefined when no answer arrived (connection, timeout, abort). */
    this.status = fields.status;
    /** Stable snake_case code of the service (or of the client for pre-flight checks). */
    this.code = fields.code ?? "api_error";
    /** Whether the retry policy considered the error retryable. */
    this.retryable = fields.retryable === true;
    /** The service's request id, when it gave one. */
    this.requestId = fields.requestId;
    /** Link to the documentation of the broken rule. */
    this.docUrl = fields.docUrl;
    /** Response headers, names in lower case (empty when no answer arrived). */
    this.headers = fields.headers ?? {};
    /** Seconds the service asked to wait (`Retry-After`), when it did. */
    this.retryAfter = fields.retryAfter;
    /**
     * A write that is not replay-safe may have been applied: the request went out, no answer came back (lost
     * connection, timeout), and it was not sent again. Read the resource to learn whether it happened.
     */
    this.outcomeUnknown = fields.outcomeUnknown === true;
  }
}

/** 400, and inputs rejected before any request was spent. */
export class BadRequestError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "BadRequestError"; }
}
/** 401. */
export class AuthenticationError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "AuthenticationError"; }
}
/** 402 `credits_exhausted`: never retried. */
export class CreditsExhaustedError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "CreditsExhaustedError"; }
}
/** 403. */
export class PermissionDeniedError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "PermissionDeniedError"; }
}
/** 404. */
export class NotFoundError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "NotFoundError"; }
}
/** 409. */
export class ConflictError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "ConflictError"; }
}
/** 410: the run passed its ttl. */
export class GoneError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "GoneError"; }
}
/** 422. */
export class UnprocessableEntityError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "UnprocessableEntityError"; }
}
/** 429. */
export class RateLimitError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "RateLimitError"; }
}
/** Any 5xx. */
export class InternalServerError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "InternalServerError"; }
}
/** The connection failed before an answer arrived. */
export class APIConnectionError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "APIConnectionError"; }
}
/** An attempt exceeded its timeout. */
export class APITimeoutError extends APIConnectionError {
  constructor(message, fields) { super(message, fields); this.name = "APITimeoutError"; }
}
/** The caller's `signal` aborted the call. */
export class APIUserAbortError extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "APIUserAbortError"; }
}

/** A webhook that failed verification; `code` says why, `status` what to answer the sender. */
export class WebhookVerificationError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {number} [status] the HTTP status to answer with (the verifier sets it by `code`; 400 when not given)
   */
  constructor(code, message, status = 400) {
    super(message);
    this.name = "WebhookVerificationError";
    this.code = code;
    this.status = status;
  }
}

/** A realtime transcription failure; `code` says why, `retryable` whether a reconnect may help. */
export class RealtimeError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {boolean} retryable
   */
  constructor(code, message, retryable = false) {
    super(message);
    this.name = "RealtimeError";
    this.code = code;
    this.retryable = retryable === true;
  }
}

const CLASSES = {
  APIError, BadRequestError, AuthenticationError, CreditsExhaustedError, PermissionDeniedError, NotFoundError,
  ConflictError, GoneError, UnprocessableEntityError, RateLimitError, InternalServerError, APIConnectionError,
  APITimeoutError, APIUserAbortError,
};

/**
 * Builds the error of class `className` (an unknown name gives the base `APIError`). Used by the wasm glue.
 * @param {string} className
 * @param {string} message
 * @param {object} fields
 */
export function createApiError(className, message, fields) {
  const Class = Object.prototype.hasOwnProperty.call(CLASSES, className) ? CLASSES[className] : APIError;
  return new Class(message, fields);
}

/**
 * Builds a `WebhookVerificationError`. Used by the wasm glue.
 * @param {string} code
 * @param {string} message
 * @param {number} status
 */
export function createWebhookError(code, message, status) {
  return new WebhookVerificationError(code, message, status);
}

/**
 * Builds a `RealtimeError`. Used by the wasm glue.
 * @param {string} code
 * @param {string} message
 * @param {boolean} retryable
 */
export function createRealtimeError(code, message, retryable) {
  return new RealtimeError(code, message, retryable);
}
