// The error classes of the docauto package: plain ESM, no dependencies.
//
// wasm-bindgen copies this file next to the glue (pkg/wasm/snippets/docauto-<hash>/src/wasm/errors.js) and the Rust
// side constructs errors through `createApiError` / `createWebhookError`; the package entries re-export the classes
// from that same file, so `error instanceof NotFoundError` holds for errors the client throws.
//
// `name` is set explicitly on every error and every class (not inferred from the code), so minifiers cannot change it.
//
// One class per name across copies. Every entry's module has its own copy of this file (wasm-bindgen copies it next
// to each entry's glue; the Node and Deno entry files each bundle theirs), and an application may load two copies
// of the package (two versions side by side, or a bundle beside node_modules). So `WebhookVerificationError` exists
// once per entry that exports it, and the ordinary `instanceof` (one prototype object) would be false for an error
// thrown by `docauto/webhooks` and the class `docauto/testing` exports. Each class's prototype therefore carries its
// name under a registered symbol, the same key in every copy and realm, and the base classes define
// `Symbol.hasInstance`: `value instanceof C` holds when the ordinary check does, or when a prototype on `value`'s
// chain carries `C`'s name. Subclasses follow from the chain (an `APITimeoutError` of any copy is an
// `APIConnectionError` and an `APIError` of every copy); a class an application derives from ours carries no name of
// its own and keeps the ordinary check. Nothing is shared between copies but the symbol's key: no global state.

/** The key under which each class's prototype carries the class's name. */
const CLASS_NAME = Symbol.for("docauto.errorClass");

const ordinaryHasInstance = Function.prototype[Symbol.hasInstance];

/**
 * `value instanceof Class` for a class of this file (or a class derived from one).
 * @param {Function} Class
 * @param {unknown} value
 */
function hasInstance(Class, value) {
  if (ordinaryHasInstance.call(Class, value)) return true;
  const proto = Class.prototype;
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  if (proto === null || typeof proto !== "object" || !Object.prototype.hasOwnProperty.call(proto, CLASS_NAME)) {
    return false;
  }
  const name = proto[CLASS_NAME];
  try {
    for (let p = Object.getPrototypeOf(value); p !== null; p = Object.getPrototypeOf(p)) {
      const own = Object.getOwnPropertyDescriptor(p, CLASS_NAME);
      if (own !== undefined && own.value === name) return true;
    }
  } catch {
    // A Proxy on the chain whose trap throws: not one of ours.
  }
  return false;
}

/**
 * `Class`, named `name` (its constructor's `name`, whatever a minifier does to the code) and marked with it on its
 * prototype, the mark `hasInstance` compares. Pure: a bundler drops every class an entry does not use.
 * @template {Function} T
 * @param {string} name
 * @param {T} Class
 * @returns {T}
 */
function errorClass(name, Class) {
  Object.defineProperty(Class, "name", { value: name });
  Object.defineProperty(Class.prototype, CLASS_NAME, { value: name });
  return Class;
}

/** Base class of every error of an API call. */
export const APIError = /* @__PURE__ */ errorClass("APIError", class extends Error {
  /** Also true for an error of this name from another entry or another copy of the package. */
  static [Symbol.hasInstance](value) {
    return hasInstance(this, value);
  }

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
});

/** 400, and inputs rejected before any request was spent. */
export const BadRequestError = /* @__PURE__ */ errorClass("BadRequestError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "BadRequestError"; }
});
/** 401. */
export const AuthenticationError = /* @__PURE__ */ errorClass("AuthenticationError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "AuthenticationError"; }
});
/** 402 `credits_exhausted`: never retried. */
export const CreditsExhaustedError = /* @__PURE__ */ errorClass("CreditsExhaustedError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "CreditsExhaustedError"; }
});
/** 403. */
export const PermissionDeniedError = /* @__PURE__ */ errorClass("PermissionDeniedError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "PermissionDeniedError"; }
});
/** 404. */
export const NotFoundError = /* @__PURE__ */ errorClass("NotFoundError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "NotFoundError"; }
});
/** 409. */
export const ConflictError = /* @__PURE__ */ errorClass("ConflictError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "ConflictError"; }
});
/** 410: the run passed its ttl. */
export const GoneError = /* @__PURE__ */ errorClass("GoneError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "GoneError"; }
});
/** 422. */
export const UnprocessableEntityError = /* @__PURE__ */ errorClass("UnprocessableEntityError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "UnprocessableEntityError"; }
});
/** 429. */
export const RateLimitError = /* @__PURE__ */ errorClass("RateLimitError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "RateLimitError"; }
});
/** Any 5xx. */
export const InternalServerError = /* @__PURE__ */ errorClass("InternalServerError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "InternalServerError"; }
});
/** The connection failed before an answer arrived. */
export const APIConnectionError = /* @__PURE__ */ errorClass("APIConnectionError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "APIConnectionError"; }
});
/** An attempt exceeded its timeout. */
export const APITimeoutError = /* @__PURE__ */ errorClass("APITimeoutError", class extends APIConnectionError {
  constructor(message, fields) { super(message, fields); this.name = "APITimeoutError"; }
});
/** The caller's `signal` aborted the call. */
export const APIUserAbortError = /* @__PURE__ */ errorClass("APIUserAbortError", class extends APIError {
  constructor(message, fields) { super(message, fields); this.name = "APIUserAbortError"; }
});

/** A webhook that failed verification; `code` says why, `status` what to answer the sender. */
export const WebhookVerificationError = /* @__PURE__ */ errorClass("WebhookVerificationError", class extends Error {
  /** Also true for an error of this name from another entry or another copy of the package. */
  static [Symbol.hasInstance](value) {
    return hasInstance(this, value);
  }

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
});

/** A realtime transcription failure; `code` says why, `retryable` whether a reconnect may help. */
export const RealtimeError = /* @__PURE__ */ errorClass("RealtimeError", class extends Error {
  /** Also true for an error of this name from another entry or another copy of the package. */
  static [Symbol.hasInstance](value) {
    return hasInstance(this, value);
  }

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
});

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
