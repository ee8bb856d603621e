/**
 * A store of claimed and processed event ids with an atomic claim, shared by every instance of a service (Redis
 * `SET NX`, a Durable Object, D1). `verify` claims each event; `markProcessed` confirms; `releaseClaim` gives up.
 */
export interface WebhookClaimStore {
  /**
   * Claims the id atomically: `true` when this caller won (nothing held it), `"processed"` when the id is marked
   * processed, `false` when another caller's claim holds it (or the store cannot tell). The claim lapses after
   * `ttlSeconds` (60) unless confirmed by `add`.
   */
  claim(eventId: string, ttlSeconds: number): boolean | "processed" | Promise<boolean | "processed">;
  /** Drops a claim (the handler failed), so the next delivery wins. Must leave a processed id alone. */
  release(eventId: string): void | Promise<void>;
  /** Marks the id processed for `ttlSeconds` (a week), replacing its claim. */
  add(eventId: string, ttlSeconds: number): void | Promise<void>;
}

/**
 * A check-then-add store of processed ids. Racy: two concurrent deliveries both pass `has` and both are handled.
 * Still accepted; prefer a {@link WebhookClaimStore}.
 */
export interface WebhookCheckThenAddStore {
  /** Whether the id was marked processed. */
  has(eventId: string): boolean | Promise<boolean>;
  /** Marks the id processed. */
  add(eventId: string, ttlSeconds: number): void | Promise<void>;
}

/** A store for the `dedupe` option: one with an atomic `claim`, or a (racy) check-then-add one. */
export type WebhookDedupeStore = WebhookClaimStore | WebhookCheckThenAddStore;

/**
 * Options of `new WebhookVerifier(...)`: one of `jwksUrl`, `baseUrl`, `jwks` (or `jwks` with a URL, to seed the cache).
 * The data options are generated from the Rust type (`WebhookVerifierDataOptions`); these are the JS handles.
 */
export interface WebhookVerifierOptions extends WebhookVerifierDataOptions {
  /** The `fetch` used for the key set. Default: the global `fetch`. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /**
   * `true` for an in-memory store, or your own store. `verify` claims each event: the first delivery of an `eventId`
   * has `duplicate: false`, every other one `duplicate: true` until `releaseClaim` or 60 s pass; after
   * `markProcessed` for a week.
   */
  dedupe?: boolean | WebhookDedupeStore;
}

/** The error a failed verification rejects (or throws) with; `code` says why. */
export declare class WebhookVerificationError extends Error {
  constructor(code: WebhookErrorCode, message: string);
  name: "WebhookVerificationError";
  code: WebhookErrorCode;
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
