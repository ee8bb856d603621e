/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON Schema of an extraction (the service's dialect: root object, nesting at most 5, no `$ref`/`oneOf`...). */
export type JsonSchema = { [keyword: string]: unknown };

/** Where log lines go (default: `console`). Lines never hold the key, bodies or query strings. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Options of `new DocAuto(...)`: the data options are generated from the Rust type (`ClientDataOptions`); these are
 * the JS handles (and `tracerProvider`, `meterProvider`: where each method's spans and metric points go).
 */
export interface ClientOptions extends ClientDataOptions, TelemetryOptions {
  /** The `fetch` used for every request. Default: the global `fetch`. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Receives the log lines (`debug`, `info`, `warn`, `error`). Default: `console`. */
  logger?: Logger;
}

/** Options every method takes as its last argument. */
export interface RequestOptions {
  /** The idempotency key of a POST. Default: one generated per call, reused by its retries. */
  idempotencyKey?: string;
  /** Per-attempt timeout of this call, in milliseconds. Default: the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Retries of this call after the first attempt (0 to 100). Default: the client's `maxRetries`. */
  maxRetries?: number;
  /** Aborts the call (it rejects with `APIUserAbortError`). */
  signal?: AbortSignal;
}

/** Options of routes that take `wait`. */
export interface WaitRequestOptions extends RequestOptions {
  /**
   * Holds the request up to this many seconds (0 to 120) for the run to settle. Default: the service's (60 on run
   * starts, 0 on agent-run reads).
   */
  wait?: number;
}

/** Options of a wait (`waitFor`, `waitUntilReady`). */
export interface WaitOptions extends RequestOptions {
  /**
   * Overall deadline of the whole wait in milliseconds (every poll and pause included). When the next poll could not
   * end within it, the wait rejects with `APITimeoutError` code `wait_deadline`. Default: none (each request is still
   * bounded by `timeoutMs`).
   */
  deadlineMs?: number;
}

/** Options of `waitFor`. */
export interface WaitForOptions extends WaitOptions {
  /**
   * When the wait ends: `"finished"`, at a terminal status; `"settled"`, also when the run is blocked on a person (or
   * needs a signature). Default: `"finished"`.
   */
  until?: "finished" | "settled";
}

/** The HTTP side of an answer. */
export interface APIResponseInfo {
  status: number;
  /** Names in lower case. */
  headers: Record<string, string>;
  requestId: string | null;
  /** The service returned the stored result of an earlier request with the same idempotency key. */
  idempotentReplay: boolean;
}

/** What `withResponse()` resolves to. */
export interface WithResponse<T> {
  data: T;
  response: APIResponseInfo;
}

/** The promise every method returns: resolves to the data; `withResponse()` adds the HTTP side. */
export interface APIPromise<T> extends Promise<T> {
  withResponse(): Promise<WithResponse<T>>;
}

/** A page of a cursor list; async-iterable over every item of this page and the following ones. */
export interface Page<T> extends AsyncIterable<T> {
  object: "list";
  data: T[];
  hasMore: boolean;
  cursor: string | null;
  /** Whether `nextPage()` will fetch a page. */
  hasNextPage(): boolean;
  /** The next page, or `null` at the end. */
  nextPage(): Promise<Page<T> | null>;
}

/** `runs.list(...)`: awaitable to the first page, async-iterable over every item of every page. */
export interface PagePromise<T> extends APIPromise<Page<T>>, AsyncIterable<T> {}

/** `{object: "list", data}` of routes without pagination. */
export interface ObjectList<T> {
  object: "list";
  data: T[];
}

/** A file by URL (fetched by the service) or by id (already registered or produced). */
export type FileRef =
  | { url: string; name?: string; processing?: "auto" | "ocr" | "simple" | "transcribe" | "transcribe_diarize" }
  | { id: string };

/** Where a run's events go: an ad-hoc URL or a saved endpoint. */
export type WebhookRef = { url: string } | { id: string };

/** Caller key/values (at most 10 KB as JSON). */
export type Metadata = Record<string, JsonValue>;

/** `agents.list()`. */
export type AgentList = ObjectList<Agent>;

/** Answer of an approve or reject. */
export interface ApprovalDecision {
  object: "agent_run_approval";
  id: string;
  kind: "before" | "output";
  action: string;
  status: string;
  requestedAt: string;
  decidedAt: string;
  note: string | null;
  run: RunHandle;
}

/** Answer of a task completion. */
export interface TaskCompletion {
  object: "agent_run_task";
  id: string;
  title: string;
  executor: Executor;
  status: "completed";
  summary: string | null;
  completedAt: string;
  run: RunHandle;
}

/** Fields every verb takes. */
export interface VerbCommonParams {
  metadata?: Metadata;
  webhook?: WebhookRef;
  /** Seconds until the run is purged (default 86400, at most 604800). */
  ttl?: number;
}

/** Input documents: one `file` or 1 to 100 `files`. */
export type VerbInput = { file: FileRef; files?: never } | { files: FileRef[]; file?: never };

/** Body of `extract`: `schema`, `action` or `hints` (at most one), or none to let the service infer. */
export type ExtractParams = VerbInput & VerbCommonParams & {
  schema?: JsonSchema;
  hints?: string;
  action?: string;
  citations?: boolean;
  instructions?: string;
  unit?: "per_document" | "across_documents" | "rows_per_document";
};

/** Body of `extractBatch`: a saved action over 1 to 100 files. */
export interface ExtractBatchParams extends VerbCommonParams {
  action: string;
  files: FileRef[];
  citations?: boolean;
}

/** Body of `parse`. */
export type ParseParams = VerbInput & VerbCommonParams;

/** Body of `redact`. */
export type RedactParams = VerbInput & VerbCommonParams & { categories?: string[]; mode?: string; action?: string };

/** Body of `fill`: a template and exactly one of `values` or `files`. */
export type FillParams = VerbCommonParams & {
  template: { id: string };
  output?: string;
  review?: string;
  action?: string;
} & ({ values: Record<string, JsonValue>; files?: never } | { files: FileRef[]; values?: never });

/** Body of `sign`. */
export interface SignParams extends VerbCommonParams {
  file: FileRef;
  signers: Array<{ name: string; email: string }>;
  action?: string;
}

/** Body of `pipeline`: steps keyed by capability name, run in parallel over the files. */
export type PipelineParams = VerbCommonParams & { files: FileRef[]; steps: Array<Record<string, Record<string, unknown>>> };

/** Body of the deprecated `actions.create`. */
export interface ActionCreateParams extends ConfigParams {
  capability: ConfigCapability;
}

/** `actions.catalog()` (shape not published beyond being an object). */
export type ActionCatalog = Record<string, unknown>;

/** Body of `runs.keep`. */
export type KeepParams = { spaceId: string; space?: never } | { space: string; spaceId?: never } | Record<string, never>;

/** Answer of `runs.keep` (shape not published). */
export type KeepResult = Record<string, unknown>;

/** Body of `files.upload`. */
export interface FileUploadParams {
  name: string;
  mimeType: string;
  data: string | ArrayBuffer | ArrayBufferView | Blob;
}

/** A saved webhook endpoint. */
export interface WebhookEndpoint {
  object?: "webhook_endpoint";
  id: string;
  url: string;
  events?: string[];
  disabled: boolean;
  createdAt: string;
}

/** `webhooks.list()`. */
export type WebhookList = ObjectList<WebhookEndpoint>;

/** One delivery attempt. */
export interface WebhookDelivery {
  object?: "webhook_delivery";
  endpointId: string;
  processingId: string;
  eventId: string;
  type: string;
  attempt: number;
  responseStatus: number;
  ok: boolean;
  at: string;
}

/** `webhooks.deliveries(id)`: the 50 most recent, newest first. */
export type WebhookDeliveryList = ObjectList<WebhookDelivery>;

/** Fields of every API error. */
export interface APIErrorFields {
  status?: number;
  code?: string;
  retryable?: boolean;
  requestId?: string;
  docUrl?: string;
  headers?: Record<string, string>;
  retryAfter?: number;
  outcomeUnknown?: boolean;
}

/**
 * Base class of every error of an API call; thrown as itself for a status without a class of its own (a 3xx on a
 * JSON route, 405, 413, ...) and for a success whose body is not what the route promises. `instanceof` with this
 * class or a subclass also holds for an error of the same class from another copy of the package in the process.
 */
export declare class APIError extends Error {
  constructor(message: string, fields?: APIErrorFields);
  /** HTTP status; `undefined` for connection, timeout and abort errors (pre-flight checks carry 400). */
  readonly status: number | undefined;
  /** Stable snake_case code (the service's, kept verbatim when unknown). */
  readonly code: string;
  /** Whether the client's retry policy considered the error retryable. */
  readonly retryable: boolean;
  /** The service's request id (`x-request-id`), when it gave one: quote it to support. */
  readonly requestId: string | undefined;
  /** A link to the documentation of the rule the request broke, when the service gave one. */
  readonly docUrl: string | undefined;
  /** Response headers, names in lower case. */
  readonly headers: Record<string, string>;
  /** Seconds the service asked to wait, when it did. */
  readonly retryAfter: number | undefined;
  /**
   * `true` on an `APIConnectionError` / `APITimeoutError` of a write that is not replay-safe (every POST except run
   * creations): the request went out, no answer came back, and it was not sent again. It may have been applied:
   * read the resource (or list) before creating it again. `false` everywhere else.
   */
  readonly outcomeUnknown: boolean;
}
/**
 * `400`: a malformed or refused request (`invalid_request`, `invalid_schema`, ...), and inputs the client refused
 * before sending anything (with the code the service would give).
 */
export declare class BadRequestError extends APIError {}
/** `401`: the API key is missing, malformed or not valid (`unauthorized`, `invalid_token`). */
export declare class AuthenticationError extends APIError {}
/** `402`: the organization is out of credits (`credits_exhausted`); nothing was started or charged. Never retried. */
export declare class CreditsExhaustedError extends APIError {}
/** `403`: the key may not do this. */
export declare class PermissionDeniedError extends APIError {}
/** `404`: no such run, file, agent, template, action, endpoint or output (`not_found`). */
export declare class NotFoundError extends APIError {}
/**
 * `409`: a state conflict: `file_not_ready`, `output_not_ready`, `already_kept`, `pipeline_running`, a second
 * decision on an approval.
 */
export declare class ConflictError extends APIError {}
/** `410`: the run passed its `ttl` and was purged (`run_expired`). */
export declare class GoneError extends APIError {}
/** `422`: the request was understood but cannot be done (`file_fetch_failed`, `webhook_endpoint_disabled`, ...). */
export declare class UnprocessableEntityError extends APIError {}
/** `429`: the rate limit is spent (`rate_limited`); `retryAfter` says how long to wait. */
export declare class RateLimitError extends APIError {}
/** `5xx`: a failure of the service (`internal_error`, `file_unreadable`, ...). */
export declare class InternalServerError extends APIError {}
/** No answer arrived: DNS, TCP or TLS failure, or a dropped connection. */
export declare class APIConnectionError extends APIError {}
/**
 * An attempt exceeded `timeoutMs` (a kind of `APIConnectionError`), or a wait passed its `deadlineMs`
 * (`wait_deadline`).
 */
export declare class APITimeoutError extends APIConnectionError {}
/** The caller's `signal` aborted the call. */
export declare class APIUserAbortError extends APIError {}
