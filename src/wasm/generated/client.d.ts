// Generated from the Rust types by `cargo xtask types` (ts-rs, see src/typegen.rs): do not edit.

/**
 * The data options of `new DocAuto(...)`, as JS gives them (camelCase; numbers are JS numbers); the handles
 * (`fetch`, `logger`) are added by `ClientOptions`.
 */
export type ClientDataOptions = {
  /**
   * The secret API key. Default: `DOCAUTO_API_KEY` from the environment (Node, Bun, Deno).
   */
  apiKey?: string;
  /**
   * The API's address (an absolute http(s) URL, optionally with a path prefix); the key is sent to this origin
   * only. Default: `DOCAUTO_BASE_URL` from the environment.
   */
  baseUrl?: string;
  /**
   * Retries after the first attempt (0 to 100). Default: `2`.
   */
  maxRetries?: number;
  /**
   * Per-attempt timeout in milliseconds (at least 1). Default: `600000` (10 minutes).
   */
  timeoutMs?: number;
  /**
   * Largest `Retry-After` honoured, in milliseconds; a longer one ends the call with the error, `retryAfter` set.
   * Default: `60000`.
   */
  maxRetryAfterMs?: number;
  /**
   * Headers added to every request to `baseUrl` (never `authorization` or `idempotency-key`; never to other
   * hosts). Values must be strings. Default: none.
   */
  defaultHeaders?: Record<string, string>;
  /**
   * Allows construction in a browser page or worker, where the secret key would be visible to anyone. Default:
   * `false`.
   */
  dangerouslyAllowBrowser?: boolean;
  /**
   * How much the client logs: `off`, `error` (calls that failed after their retries), `warn` (and each retry),
   * `info` (and every call's end), `debug` (and every attempt: method, path, status, request id, attempt and
   * elapsed ms). Default: `DOCAUTO_LOG` from the environment, else `warn`.
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

/**
 * Status of a step of a run.
 * Open: the service may add values.
 */
export type TaskStatus = "pending" | "ready" | "in_progress" | "completed" | "skipped" | (string & {});

/**
 * When an action's sign-off is requested.
 * Open: the service may add values.
 */
export type ApprovalKind = "before" | "output" | (string & {});

/**
 * An agent run (`object: agent_run`). A 202 answer may carry only `{object, id, status, statusUrl}`.
 */
export type AgentRun = {
  /**
   * `agent_run`.
   */
  object: "agent_run";
  /**
   * `agr_...`.
   */
  id: string;
  /**
   * Agent executed.
   */
  agent?: {
    /**
     * Agent id.
     */
    id: string;
    /**
     * Name.
     */
    name: string;
    /**
     * Version.
     */
    version: number;
  };
  /**
   * Status.
   */
  status: AgentRunStatus;
  /**
   * Outstanding work while `waiting`.
   */
  waiting?: {
    /**
     * Outstanding approvals.
     */
    approvals: number;
    /**
     * Outstanding human tasks.
     */
    tasks: number;
    /**
     * One-line summary.
     */
    summary: string;
  };
  /**
   * Reason while `paused`.
   */
  paused?: { reason: "model_error" | "system_error" | (string & {}) };
  /**
   * Task counts.
   */
  progress?: { tasks: { total: number; completed: number } };
  /**
   * The step ledger.
   */
  tasks?: Array<RunTask>;
  /**
   * Outstanding sign-offs, oldest first.
   */
  approvals?: Array<RunApproval>;
  /**
   * Closing summary (string or object).
   */
  result?: string | Record<string, unknown>;
  /**
   * `files[]` attached while steps completed.
   */
  output?: { files: Array<{ url: string; [field: string]: unknown }> };
  /**
   * `{code, message}` when failed.
   */
  error?: {
    /**
     * Code (`run_cancelled`, `run_expired`, ...).
     */
    code: string;
    /**
     * Text.
     */
    message: string;
  };
  /**
   * Completed with outstanding work.
   */
  incomplete?: boolean;
  /**
   * `/v1/agent-runs/<id>`.
   */
  statusUrl: string;
  /**
   * Caller key/values.
   */
  metadata?: Metadata;
  /**
   * Creation time.
   */
  createdAt?: string;
  /**
   * Run deadline.
   */
  expiresAt?: string;
} & { [key: string]: unknown };

/**
 * A step of a run.
 */
export type RunTask = {
  /**
   * Task id.
   */
  id: string;
  /**
   * Title.
   */
  title: string;
  /**
   * `agent` or `human`.
   */
  executor: Executor;
  /**
   * Status.
   */
  status: TaskStatus;
  /**
   * Summary recorded when the step closed.
   */
  summary: string | null;
  /**
   * Completion time.
   */
  completedAt: string | null;
} & { [key: string]: unknown };

/**
 * An outstanding sign-off.
 */
export type RunApproval = {
  /**
   * Approval id.
   */
  id: string;
  /**
   * `before` or `output`.
   */
  kind: ApprovalKind;
  /**
   * Action name.
   */
  action: string;
  /**
   * Request time.
   */
  requestedAt: string;
  /**
   * Why the agent asks.
   */
  rationale: string;
  /**
   * Files involved.
   */
  files: Array<{ id: string; name: string; [field: string]: unknown }>;
  /**
   * Proposed inputs.
   */
  params: Record<string, unknown>;
} & { [key: string]: unknown };

/**
 * `{id, status, statusUrl}` of the run an approval or task belongs to.
 */
export type RunHandle = {
  /**
   * Run id.
   */
  id: string;
  /**
   * Status after the decision.
   */
  status: AgentRunStatus;
  /**
   * Path of the run.
   */
  statusUrl: string;
};

/**
 * A saved, versioned automation (`object: agent`).
 */
export type Agent = {
  /**
   * `agent`.
   */
  object: "agent";
  /**
   * Agent id.
   */
  id: string;
  /**
   * Name.
   */
  name: string;
  /**
   * Version of the saved automation.
   */
  version: number;
  /**
   * Steps.
   */
  tasks: Array<AgentTask>;
  /**
   * Saved actions.
   */
  actions: Array<AgentAction>;
  /**
   * Description (type not shown in the spec).
   */
  description?: JsonValue;
  /**
   * Last update (format not shown in the spec).
   */
  updatedAt?: JsonValue;
} & { [key: string]: unknown };

/**
 * A step of an agent.
 */
export type AgentTask = {
  /**
   * Task id.
   */
  id: string;
  /**
   * Title.
   */
  title: string;
  /**
   * `agent` or `human`.
   */
  executor: Executor;
  /**
   * Ids of the tasks this one waits for.
   */
  dependsOn: Array<string>;
} & { [key: string]: unknown };

/**
 * A saved action of an agent.
 */
export type AgentAction = {
  /**
   * Action name.
   */
  name: string;
  /**
   * Approval gate (`before`).
   */
  approval?: ApprovalKind;
} & { [key: string]: unknown };

/**
 * A capability run (only `id` and `status` are sure; a 202 may carry only the handle).
 */
export type CapabilityRun = {
  /**
   * For example `extract_run`.
   */
  object?: string;
  /**
   * `exr_`, `par_`, `rdr_`, `flr_`, `sgr_` or `plr_` prefixed id.
   */
  id: string;
  /**
   * Status.
   */
  status: RunStatus;
  /**
   * Config applied (for extract: the `schema`).
   */
  config?: { schema?: JsonSchema; [field: string]: unknown };
  /**
   * Present only at `processed`.
   */
  output?: ExtractOutput;
  /**
   * `/v1/runs/<id>`.
   */
  statusUrl?: string;
  /**
   * Purge deadline.
   */
  expiresAt?: string;
  /**
   * Signing envelope (sign runs).
   */
  envelopeUrl?: string;
  /**
   * Caller key/values.
   */
  metadata?: Metadata;
} & { [key: string]: unknown };

/**
 * Output of an extract run.
 */
export type ExtractOutput = {
  /**
   * Alias of the first document's value.
   */
  value?: JsonValue;
  /**
   * Citations of the first document (only when grounded).
   */
  citations?: Record<string, unknown>;
  /**
   * Per-document results.
   */
  documents?: Array<ExtractDocument>;
  /**
   * Citations dropped for size.
   */
  citationsOmitted?: true;
} & { [key: string]: unknown };

/**
 * One document of an extract output.
 */
export type ExtractDocument = {
  /**
   * File id.
   */
  fileId: string;
  /**
   * Name.
   */
  name: string;
  /**
   * Status.
   */
  status: string;
  /**
   * Extracted value.
   */
  value: JsonValue;
  /**
   * Citations keyed like the value.
   */
  citations?: Record<string, unknown>;
} & { [key: string]: unknown };

/**
 * A citation entry.
 */
export type Citation = {
  /**
   * File id.
   */
  fileId: string;
  /**
   * 0-based page.
   */
  page?: number;
  /**
   * Normalized box, top-left origin.
   */
  bbox?: {
    /**
     * Left.
     */
    x: number;
    /**
     * Top.
     */
    y: number;
    /**
     * Width.
     */
    width: number;
    /**
     * Height.
     */
    height: number;
  };
  /**
   * Cited text.
   */
  text?: string;
  /**
   * 0 to 5.
   */
  confidence?: number;
  /**
   * Declared absent.
   */
  notFound?: boolean;
} & { [key: string]: unknown };

/**
 * Capabilities that have saved configs.
 */
export type ConfigCapability = "extract" | "redact" | "fill";

/**
 * A saved config as answered (fields beyond `id` are not shown in the spec).
 */
export type SavedConfig = {
  /**
   * Id, usable in a verb's `action` field.
   */
  id: string;
} & { [key: string]: unknown };

/**
 * A registered file. Only `id` and `status` are shown in the spec; `ready` is the state to wait for.
 */
export type FileRecord = {
  /**
   * File id.
   */
  id: string;
  /**
   * Status (`ready` when usable).
   */
  status: string;
  /**
   * Upload address of a `{name, mimeType}` registration, valid 15 minutes.
   */
  uploadUrl?: string;
} & { [key: string]: unknown };

/**
 * A live session: its `wss://` address carries a single-use ticket (a secret). The field holding the address is
 * not named by the spec; the client reads `url` (or `wsUrl`), refuses an answer without one, and keeps every other
 * field.
 */
export type RealtimeSession = {
  /**
   * Session id.
   */
  id?: string;
  /**
   * The session's `ws://` / `wss://` address with its single-use ticket: always present (the client refuses an
   * answer without one with `unexpected_shape`, and takes it from `wsUrl` when the service names it so). A secret:
   * hand it to one browser or `RealtimeTranscriber`, never log it.
   */
  url: string;
} & { [key: string]: unknown };

/**
 * Body of `POST /v1/agent-runs`.
 */
export type AgentRunCreateParams = {
  /**
   * Agent id from the list route.
   */
  agent: string;
  /**
   * 1 to 200 file references.
   */
  files: Array<FileRef>;
  /**
   * At most 10 KB.
   */
  metadata?: Metadata;
  /**
   * Destination of this run's events.
   */
  webhook?: WebhookRef;
};

/**
 * Body of an approval (without `decision`).
 */
export type ApproveParams = {
  /**
   * At most 4000 characters.
   */
  note?: string;
  /**
   * Replaces the proposed inputs of a `before` gate.
   */
  params?: Record<string, JsonValue>;
  /**
   * Replaces the step's files: up to 200 file ids.
   */
  files?: Array<string>;
};

/**
 * Body of a rejection.
 */
export type RejectParams = {
  /**
   * Required, at most 4000 characters.
   */
  note: string;
};

/**
 * Body of a task completion (both optional).
 */
export type CompleteTaskParams = {
  /**
   * At most 2000 characters; becomes the step's summary.
   */
  note?: string;
  /**
   * Up to 20 file ids.
   */
  files?: Array<string>;
};

/**
 * Query of `GET /v1/runs`.
 */
export type RunListParams = {
  /**
   * Page size, 1 to 50 (server default 20).
   */
  limit?: number;
  /**
   * Cursor from the previous page.
   */
  cursor?: string;
  /**
   * Status filter (any status except `queued`).
   */
  status?: Exclude<RunStatus, "queued">;
  /**
   * Object filter (for example `extract_run`).
   */
  object?: string;
  /**
   * Up to three `metadata.<key>=<value>` filters, in order. On the wire (from JS) an object
   * `{key: value}`.
   */
  metadata?: { [key in string]?: string };
};

/**
 * Body of a registration by URL (the source must serve a Content-Length).
 */
export type FileCreateParams = {
  /**
   * Source URL.
   */
  url: string;
  /**
   * Display name.
   */
  name?: string;
};

/**
 * Body of `POST /v1/webhooks`.
 */
export type WebhookCreateParams = {
  /**
   * https URL.
   */
  url: string;
  /**
   * Event types; omitted means all.
   */
  events?: Array<string>;
};

/**
 * Body of `PATCH /v1/webhooks/:id`.
 */
export type WebhookUpdateParams = {
  /**
   * New https URL.
   */
  url?: string;
  /**
   * New event filter.
   */
  events?: Array<string>;
  /**
   * Pause or resume.
   */
  disabled?: boolean;
};

/**
 * Body of a session creation. Fields beyond `finalPass` are not shown in the spec and pass
 * through `extra`.
 */
export type RealtimeSessionParams = {
  /**
   * Keep a stored diarized transcript after close.
   */
  finalPass?: boolean;
} & { [key: string]: unknown };

/**
 * Body of a config creation.
 */
export type ConfigParams = {
  /**
   * Name of the saved config.
   */
  name: string;
  /**
   * The capability's config (for extract, an inline `schema` is checked against the dialect).
   */
  config: Record<string, unknown>;
};
