/**
 * A dedupe store with fenced claims and a lease, shared by every instance of a service: what `redisStore`,
 * `postgresStore`, `d1Store`, `durableObjectStore` (and `dedupe: true`, in memory) give, and the contract for writing
 * your own. Each method is one atomic step on the store's own clock:
 * - `claim` succeeds only when the id holds no live claim and no processed mark;
 * - `renew` and `release` act only when the id's claim holds `token` (`renew` also only while it is live);
 * - `add` marks the id processed, whatever it held.
 */
export interface WebhookFencedStore {
  /**
   * Claims `eventId` for `token` for `ttlSeconds`: `"won"` (nothing live held it), `"claimed"` (another live claim)
   * or `"processed"` (marked). A store that cannot tell processed from claimed answers `"claimed"`.
   */
  claim(eventId: string, ttlSeconds: number, token: string): WebhookClaimAnswer | Promise<WebhookClaimAnswer>;
  /** Extends `token`'s live claim by `ttlSeconds` from now: `true`; `false` when it is not `token`'s or lapsed. */
  renew(eventId: string, ttlSeconds: number, token: string): boolean | Promise<boolean>;
  /** Deletes the id's claim only when it holds `token`; never a processed mark. */
  release(eventId: string, token: string): unknown;
  /** Marks the id processed for `ttlSeconds` (a week), replacing any claim. */
  add(eventId: string, ttlSeconds: number): unknown;
}

/** A claim's answer: `"won"` (or `true`), `"claimed"` (or `false`), `"processed"`. */
export type WebhookClaimAnswer = "won" | "claimed" | "processed" | boolean;

/**
 * A store with an atomic claim but no lease (no `renew`), the interface before fenced claims. Still accepted:
 * `claim` gets `token` as a third argument, which it may ignore. Without `renew` a handler slower than
 * `claimTtlSeconds` can be handled twice, and a `release` that ignores the token can delete another instance's
 * claim (the verifier releases only while its own claim is live by its clock). Prefer a {@link WebhookFencedStore}.
 */
export interface WebhookClaimStore {
  claim(eventId: string, ttlSeconds: number, token: string): WebhookClaimAnswer | Promise<WebhookClaimAnswer>;
  release(eventId: string, token: string): unknown;
  add(eventId: string, ttlSeconds: number): unknown;
}

/**
 * A check-then-add store of processed ids. Racy: two concurrent deliveries both pass `has` and both are handled.
 * Still accepted; prefer a {@link WebhookFencedStore}.
 */
export interface WebhookCheckThenAddStore {
  /** Whether the id was marked processed. */
  has(eventId: string): boolean | Promise<boolean>;
  /** Marks the id processed. */
  add(eventId: string, ttlSeconds: number): unknown;
}

/** A store for the `dedupe` option. */
export type WebhookDedupeStore = WebhookFencedStore | WebhookClaimStore | WebhookCheckThenAddStore;

/** Options of `verifier.handle(input, handler, options)`. */
export interface WebhookHandleOptions {
  /**
   * Called with each failure that does not change the answer's meaning for the sender, and with the handler's own
   * error: `stage` is `"claim"` (503), `"handler"` (500), `"renew"` (the claim was lost), `"mark"` (handled, 200, but
   * not marked: a later copy may be handled again), `"release"`. Default: `console.error`.
   */
  onError?: (error: unknown, context: { event: VerifiedWebhookEvent; stage: "claim" | "handler" | "renew" | "mark" | "release" }) => void;
}

/** `redisStore` options: one binding that runs a Lua script, for any Redis client. */
export interface RedisStoreOptions {
  /**
   * Runs `script` with `keys` and `args` and resolves to its answer. node-redis:
   * `(script, keys, args) => redis.eval(script, { keys, arguments: args })`; ioredis:
   * `(script, keys, args) => redis.eval(script, keys.length, ...keys, ...args)`; @upstash/redis:
   * `(script, keys, args) => redis.eval(script, keys, args)`.
   */
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  /** Prefix of the keys. Default `"docauto:webhook:"`. */
  prefix?: string;
}

/** `postgresStore` options. */
export interface PostgresStoreOptions {
  /** Runs one statement: node-postgres `(text, params) => pool.query(text, params)`. */
  query(text: string, params: unknown[]): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
  /** The table (a plain SQL name, optionally `schema.name`). Default `docauto_webhook_events`. */
  table?: string;
}

/** What `d1Store` uses of a Cloudflare D1 database binding. */
export interface D1DatabaseLike {
  prepare(query: string): unknown;
  batch(statements: unknown[]): Promise<unknown>;
}

/** What `durableObjectStore` uses of a Durable Object namespace binding (bound to the class `DedupeObject`). */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: never): { fetch(input: string, init: { method: string; body: string }): Promise<unknown> };
}

/** What `DedupeObject` uses of its Durable Object state. */
export interface DurableObjectStateLike {
  storage: unknown;
}

/**
 * Options of `new WebhookVerifier(...)`: one of `jwksUrl`, `baseUrl`, `jwks` (or `jwks` with a URL, to seed the cache).
 * The data options are generated from the Rust type (`WebhookVerifierDataOptions`); these are the JS handles.
 */
export interface WebhookVerifierOptions extends WebhookVerifierDataOptions, TelemetryOptions {
  /** The `fetch` used for the key set. Default: the global `fetch`. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /**
   * `true` for an in-memory store (one process or isolate), or a store shared by every instance (`redisStore`,
   * `postgresStore`, `d1Store`, `durableObjectStore`, or your own). `handle` and `verify` claim each event: one
   * delivery of an `eventId` wins; the others are duplicates while the claim is live (`claimTtlSeconds`, renewed by
   * `handle`) and for a week after `markProcessed`.
   */
  dedupe?: boolean | WebhookDedupeStore;
}

/**
 * The error a failed verification rejects (or throws) with; `code` says why, `status` what to answer. One class for
 * `docauto/webhooks` and `docauto/testing`: `instanceof` holds for an error of either entry, and of another copy of
 * the package.
 */
export declare class WebhookVerificationError extends Error {
  constructor(code: WebhookErrorCode, message: string, status?: number);
  name: "WebhookVerificationError";
  code: WebhookErrorCode;
  /**
   * The HTTP status to answer the sender with: 400 (not an authentic delivery), 408 (`body_timeout`), 413
   * (`body_too_large`), 503 (`jwks_unavailable`, `dedupe_unavailable`: the service delivers again), 500 (the
   * receiver's own options or code).
   */
  status: number;
}

/** Fields every agent-run event payload begins with. */
export interface AgentRunEventData {
  object: "agent_run";
  id: string;
  status: AgentRunStatus;
  /** Present when the run was started with metadata. */
  metadata?: Record<string, unknown>;
}

/** The envelope of every event: five fields. */
export interface WebhookEnvelope<T extends string, D> {
  /** Unique id: the deduplication key. */
  eventId: string;
  type: T;
  /** The run id (`agr_...` for agent runs), or the space id for space events. */
  processingId: string;
  /** ISO 8601 timestamp. */
  occurredAt: string;
  data: D;
}

/** Event types whose `data` shape the API does not publish. */
export type OtherWebhookEventType =
  | "processing.started" | "file.processed" | "file.failed" | "run.completed" | "run.failed"
  | "processing.completed" | "processing.expired";

/** A verified event: a union on `type`; narrow it with `if (event.type === "...")`. */
export type WebhookEvent =
  | WebhookEnvelope<"agent_run.waiting", AgentRunEventData & {
      waiting: { approvals: number; tasks: number; summary: string };
    }>
  | WebhookEnvelope<"agent_run.approval_requested", AgentRunEventData & {
      approval: { id: string; kind: "before" | "output"; action: string; requestedAt: string };
    }>
  | WebhookEnvelope<"agent_run.task_ready", AgentRunEventData & {
      task: { id: string; title: string; executor: "human"; status: "ready" };
    }>
  | WebhookEnvelope<"agent_run.completed", AgentRunEventData & {
      progress: { tasks: { total: number; completed: number } };
      result?: string | Record<string, unknown>;
      output?: { files: Array<{ url: string; [field: string]: unknown }> };
      incomplete?: boolean;
    }>
  | WebhookEnvelope<"agent_run.failed", AgentRunEventData & { error: { code: string; message: string } }>
  | WebhookEnvelope<"space.expired", { spaceId: string; name: string; expiresAt: string }>
  | WebhookEnvelope<OtherWebhookEventType, Record<string, unknown>>;

/**
 * What `verify` returns: the event, plus `duplicate` and `inProgress` when the `dedupe` option is on. `duplicate` is
 * `false` for the one caller that claimed the event: handle it, then `markProcessed` or `releaseClaim`.
 */
export type VerifiedWebhookEvent = WebhookEvent & {
  duplicate?: boolean;
  /**
   * A duplicate whose first delivery is still being handled (its claim is live, not confirmed): answer non-2xx
   * (409) so the service delivers it again later. `false` for a processed duplicate (answer 200) and for the winner.
   */
  inProgress?: boolean;
};
