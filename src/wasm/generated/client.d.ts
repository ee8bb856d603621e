// Generated from the Rust types by `cargo xtask types` (ts-rs, see src/typegen.rs): do not edit.

/**
 * The data options of `new DocAuto(...)`, as JS gives them (camelCase; numbers are JS numbers); the handles
 * (`fetch`, `logger`) are added by `ClientOptions`.
 */
export type ClientDataOptions = {
  /**
   * Secret API key; default `DOCAUTO_API_KEY` from the environment (Node, Bun, Deno).
   */
  apiKey?: string;
  /**
   * The API's address (absolute http(s) URL, optional path prefix); default `DOCAUTO_BASE_URL`. The key is sent
   * to this origin only.
   */
  baseUrl?: string;
  /**
   * Retries after the first attempt (0 to 100). Default 2.
   */
  maxRetries?: number;
  /**
   * Per-attempt timeout in milliseconds (at least 1). Default 600000.
   */
  timeoutMs?: number;
  /**
   * Largest `Retry-After` honoured (ms); a longer one ends the call with the error, `retryAfter` set. Default
   * 60000.
   */
  maxRetryAfterMs?: number;
  /**
   * Headers added to every request to `baseUrl` (never `authorization` or `idempotency-key`; never to other
   * hosts). Values must be strings.
   */
  defaultHeaders?: Record<string, string>;
  /**
   * Allows construction in a browser page or worker, where the secret key would be visible to anyone. Default
   * false.
   */
  dangerouslyAllowBrowser?: boolean;
  /**
   * Default `warn` (or `DOCAUTO_LOG`). `debug` logs method, path, status, request id, attempt and elapsed ms.
   */
  logLevel?: LogLevel;
};

/**
 * How much the client reports about its calls; each level includes the ones before it (ordered
 * `off < error < warn < info < debug`).
 */
export type LogLevel = "off" | "error" | "warn" | "info" | "debug";

/**
 * Executor of a task.
 * Open: the service may add values.
 */
export type Executor = "agent" | "human" | (string & {});

/**
 * Status of a capability run.
 * Open: the service may add values.
 */
export type RunStatus = "queued" | "processing" | "processed" | "failed" | "cancelled" | "expired" | "needs_input" | (string & {});
