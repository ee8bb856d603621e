import type {
  D1DatabaseLike,
  DurableObjectNamespaceLike,
  DurableObjectStateLike,
  PostgresStoreOptions,
  RedisStoreOptions,
  WebhookClaimAnswer,
  WebhookFencedStore,
} from "./wasm/docauto.js";

/** A dedupe store of `docauto/webhooks` (fenced claims with a lease): pass it as `new WebhookVerifier({ dedupe })`. */
export interface WebhookStore extends WebhookFencedStore {
  claim(eventId: string, ttlSeconds: number, token: string): Promise<Exclude<WebhookClaimAnswer, boolean>>;
  renew(eventId: string, ttlSeconds: number, token: string): Promise<boolean>;
  /** `true` when it deleted the token's claim. */
  release(eventId: string, token: string): Promise<boolean>;
  add(eventId: string, ttlSeconds: number): Promise<void>;
  /** Creates the SQL stores' table when it is missing (nothing to do for Redis and Durable Objects). */
  setup(): Promise<void>;
}

/** A store of Redis through one binding that runs a Lua script (`eval(script, keys, args)`), for any client. */
export declare function redisStore(options: RedisStoreOptions): WebhookStore;

/** A store of PostgreSQL through `query(text, params)` (node-postgres's `pool.query`); `setup()` creates its table. */
export declare function postgresStore(options: PostgresStoreOptions): WebhookStore;

/** A store of a Cloudflare D1 database binding; `setup()` creates its table. */
export declare function d1Store(db: D1DatabaseLike, options?: { table?: string }): WebhookStore;

/** A store of Durable Objects of the class `DedupeObject` (bind a namespace to it), spread over `shards` (16). */
export declare function durableObjectStore(
  namespace: DurableObjectNamespaceLike,
  options?: { shards?: number },
): WebhookStore;

/** The Durable Object of `durableObjectStore`: export it from your Worker and bind a namespace to it. */
export declare class DedupeObject {
  constructor(ctx: DurableObjectStateLike, env?: unknown);
  /** Runs one command of `durableObjectStore` (claim, renew, release, mark) on this shard's records, atomically. */
  fetch(request: Request): Promise<Response>;
  /** Deletes the records that lapsed (the runtime calls it; it sets itself again hourly while records remain). */
  alarm(): Promise<void>;
}
