// The dedupe stores of `docauto/webhooks`: each runs the contract's four steps (docs/webhooks.md, "Writing your own store";
// the rules of src/webhook/dedupe.rs, `rules`) as one atomic command of its engine (a Lua script, one SQL statement
// or batch, one Durable Object command), through the binding it is given, and reads the answer back. What to do
// with the answers (`handle`, `verify`) is decided by the Rust core. Each store is tested against its real engine
// (tests/js/dedupe/).
//
// Copied next to the entry by the build (pkg/webhooks/stores.js) and re-exported by it. JS rather than wasm: it only
// calls the bindings it is given (measured: the same adapters in Rust added 11 KB gzip to the verifier's module).
// Nothing here runs at import.
import { WebhookVerificationError } from "./wasm/@ERRORS@";

// The status each of these codes answers, as the core's `ErrorCode::http_status` gives it (src/webhook/error.rs;
// the shared suite checks the `status` of every error against the documented table).
const STATUS = { invalid_options: 500, invalid_input: 500, dedupe_unavailable: 503 };
const failure = (code, message) => new WebhookVerificationError(code, message, STATUS[code]);
const invalidOptions = (message) => failure("invalid_options", message);

/** `eventId`, `token` and `ttlSeconds` as the stores take them (whole milliseconds for the engines). */
function eventIdArg(id) {
  if (typeof id !== "string" || id === "") throw failure("invalid_input", "eventId must be a non-empty string");
  return id;
}
function tokenArg(token) {
  if (typeof token !== "string" || token === "") throw failure("invalid_input", "token must be a non-empty string");
  return token;
}
function ttlMsArg(seconds) {
  if (typeof seconds !== "number" || !(seconds > 0) || seconds > 31_536_000) {
    throw failure("invalid_input", "ttlSeconds must be a number of seconds above 0");
  }
  return Math.ceil(seconds * 1000);
}

/** The four methods of a store over `run(step, eventId, ms, token)`, with their arguments checked first. */
function fencedStore(run, setup) {
  return {
    claim: async (eventId, ttlSeconds, token) => run("claim", eventIdArg(eventId), ttlMsArg(ttlSeconds), tokenArg(token)),
    renew: async (eventId, ttlSeconds, token) => run("renew", eventIdArg(eventId), ttlMsArg(ttlSeconds), tokenArg(token)),
    release: async (eventId, token) => run("release", eventIdArg(eventId), 0, tokenArg(token)),
    add: async (eventId, ttlSeconds) => {
      await run("mark", eventIdArg(eventId), ttlMsArg(ttlSeconds), "");
    },
    setup: async () => {
      await setup?.();
    },
  };
}

const claimAnswer = (answer) => (answer === "won" || answer === "processed" ? answer : "claimed");
const one = (answer) => answer === 1 || answer === "1";

/** A table name written into the SQL: a plain name, optionally `schema.name`. */
function tableName(options) {
  const table = options?.table ?? "docauto_webhook_events";
  if (typeof table !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/.test(table)) {
    throw invalidOptions("table must be a plain SQL name (letters, digits and _, optionally schema.name)");
  }
  return table;
}

function functionOption(options, name, message) {
  let f;
  try {
    f = options?.[name];
  } catch {
    throw invalidOptions("reading an option threw (a getter or a Proxy)");
  }
  if (typeof f !== "function") throw invalidOptions(message);
  return f;
}

// Redis: the key holds `claimed:<token>` with the lease as its expiry, or `processed` for a week. A script runs alone.
const REDIS = {
  claim: `local v = redis.call('GET', KEYS[1])
if not v then redis.call('SET', KEYS[1], 'claimed:' .. ARGV[1], 'PX', ARGV[2]) return 'won' end
if v == 'processed' then return 'processed' end
return 'claimed'`,
  renew: `if redis.call('GET', KEYS[1]) == 'claimed:' .. ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0`,
  release: `if redis.call('GET', KEYS[1]) == 'claimed:' .. ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
  mark: `redis.call('SET', KEYS[1], 'processed', 'PX', ARGV[1]) return 1`,
};

/**
 * A store of Redis through one binding that runs a Lua script: `eval(script, keys, args)` (docs/webhooks.md, "Stores", for
 * node-redis, ioredis and @upstash/redis). Keys are `<prefix><eventId>`.
 */
export function redisStore(options) {
  const evaluate = functionOption(options, "eval", "redisStore needs { eval(script, keys, args) }");
  const prefix = options.prefix ?? "docauto:webhook:";
  if (typeof prefix !== "string") throw invalidOptions("prefix must be a string");
  return fencedStore(async (step, id, ms, token) => {
    const args = step === "mark" ? [String(ms)] : step === "release" ? [token] : [token, String(ms)];
    const answer = await evaluate(REDIS[step], [prefix + id], args);
    return step === "claim" ? claimAnswer(answer) : one(answer);
  });
}

/**
 * A store of PostgreSQL through `query(text, params)` resolving to `{ rows, rowCount }` (node-postgres:
 * `(text, params) => pool.query(text, params)`). Expiry by the server's `clock_timestamp()`.
 */
export function postgresStore(options) {
  const query = functionOption(options, "query", "postgresStore needs { query(text, params) }");
  const t = tableName(options);
  const until = (p) => `clock_timestamp() + ${p}::bigint * interval '1 millisecond'`;
  const sql = {
    setup: `CREATE TABLE IF NOT EXISTS ${t} (event_id text PRIMARY KEY, state text NOT NULL, token text, until timestamptz NOT NULL)`,
    // One statement: the upsert takes a lapsed row over, or leaves a live one and reads its state. No row: a claim
    // committed by another instance after this statement began, not visible to it: "claimed".
    claim: `WITH won AS (INSERT INTO ${t} AS e (event_id, state, token, until) VALUES ($1::text, 'claimed', $2::text, ${until("$3")})
      ON CONFLICT (event_id) DO UPDATE SET state = 'claimed', token = EXCLUDED.token, until = EXCLUDED.until
      WHERE e.until <= clock_timestamp() RETURNING 'won'::text AS answer)
      SELECT answer FROM won UNION ALL
      SELECT state FROM ${t} WHERE event_id = $1::text AND until > clock_timestamp() AND NOT EXISTS (SELECT 1 FROM won)`,
    renew: `UPDATE ${t} SET until = ${until("$3")} WHERE event_id = $1::text AND state = 'claimed' AND token = $2::text
      AND until > clock_timestamp()`,
    release: `DELETE FROM ${t} WHERE event_id = $1::text AND state = 'claimed' AND token = $2::text`,
    // A mark also deletes up to four rows that lapsed a minute ago or more, so the table does not grow without bound.
    mark: `WITH swept AS (DELETE FROM ${t} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t}
      WHERE until <= clock_timestamp() - interval '1 minute' LIMIT 4 FOR UPDATE SKIP LOCKED)))
      INSERT INTO ${t} AS e (event_id, state, token, until) VALUES ($1::text, 'processed', NULL, ${until("$2")})
      ON CONFLICT (event_id) DO UPDATE SET state = 'processed', token = NULL, until = EXCLUDED.until`,
  };
  return fencedStore(async (step, id, ms, token) => {
    const params = step === "mark" ? [id, String(ms)] : step === "release" ? [id, token] : [id, token, String(ms)];
    const result = await query(sql[step], params);
    if (step === "claim") return claimAnswer(result?.rows?.[0]?.answer);
    return step === "mark" || (result?.rowCount ?? 0) >= 1;
  }, () => query(sql.setup, []));
}

/** The database's clock in epoch ms, in SQLite (`julianday` is older than `unixepoch`). */
const SQLITE_NOW_MS = "((julianday('now') - 2440587.5) * 86400000.0)";

/** A store of a Cloudflare D1 database binding. Expiry by the database's clock; a claim is one batch. */
export function d1Store(db, options) {
  if (typeof db?.prepare !== "function" || typeof db?.batch !== "function") {
    throw invalidOptions("d1Store takes a D1 database binding (env.DB)");
  }
  const t = tableName(options);
  const now = SQLITE_NOW_MS;
  const sql = {
    setup: `CREATE TABLE IF NOT EXISTS ${t} (event_id TEXT PRIMARY KEY, state TEXT NOT NULL, token TEXT, until REAL NOT NULL)`,
    claim: `INSERT INTO ${t} (event_id, state, token, until) VALUES (?1, 'claimed', ?2, ${now} + ?3)
      ON CONFLICT (event_id) DO UPDATE SET state = 'claimed', token = excluded.token, until = excluded.until
      WHERE ${t}.until <= ${now}`,
    claimed: `SELECT state FROM ${t} WHERE event_id = ?1`,
    renew: `UPDATE ${t} SET until = ${now} + ?3 WHERE event_id = ?1 AND state = 'claimed' AND token = ?2 AND until > ${now}`,
    release: `DELETE FROM ${t} WHERE event_id = ?1 AND state = 'claimed' AND token = ?2`,
    mark: `INSERT INTO ${t} (event_id, state, token, until) VALUES (?1, 'processed', NULL, ${now} + ?2)
      ON CONFLICT (event_id) DO UPDATE SET state = 'processed', token = NULL, until = excluded.until`,
    sweep: `DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE until <= ${now} - 60000 LIMIT 4)`,
  };
  const changes = (result) => result?.meta?.changes ?? 0;
  return fencedStore(async (step, id, ms, token) => {
    switch (step) {
      case "claim": {
        // The upsert and the read of the row after it, in one transaction: won when the upsert wrote the row.
        const [wrote, read] = await db.batch([db.prepare(sql.claim).bind(id, token, ms), db.prepare(sql.claimed).bind(id)]);
        if (changes(wrote) === 1) return "won";
        return read?.results?.[0]?.state === "processed" ? "processed" : "claimed";
      }
      case "renew":
        return changes(await db.prepare(sql.renew).bind(id, token, ms).run()) === 1;
      case "release":
        return changes(await db.prepare(sql.release).bind(id, token).run()) >= 1;
      default:
        await db.batch([db.prepare(sql.mark).bind(id, ms), db.prepare(sql.sweep)]);
        return true;
    }
  }, () => db.prepare(sql.setup).run());
}

/** FNV-1a of the id's UTF-8 bytes: every instance sends an id to the same object. */
function shardOf(id, shards) {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(id)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return `docauto-dedupe-${h % shards}`;
}

/**
 * A store of Durable Objects of the class `DedupeObject` (export it from the Worker and bind a namespace to it):
 * event ids spread over `shards` objects (default 16).
 */
export function durableObjectStore(namespace, options) {
  if (typeof namespace?.idFromName !== "function" || typeof namespace?.get !== "function") {
    throw invalidOptions("durableObjectStore takes a Durable Object namespace binding (env.DEDUPE)");
  }
  const shards = options?.shards ?? 16;
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024) {
    throw invalidOptions("shards must be a whole number from 1 to 1024");
  }
  return fencedStore(async (step, id, ms, token) => {
    const stub = namespace.get(namespace.idFromName(shardOf(id, shards)));
    const body = JSON.stringify({ op: step, eventId: id, token: token || undefined, ttlMs: ms || undefined });
    const response = await stub.fetch("https://dedupe.docauto/", { method: "POST", body });
    const text = await response.text();
    if (!response.ok) throw failure("dedupe_unavailable", `the dedupe Durable Object answered ${response.status}`);
    const answer = JSON.parse(text);
    return step === "claim" ? claimAnswer(answer) : answer === true;
  });
}

/** How often a `DedupeObject` sweeps the records that lapsed, in ms. */
const SWEEP_EVERY_MS = 3_600_000;

/** Whether a record a `DedupeObject` stored (`{ state, token?, until }`, `until` in epoch ms) counts at `now`. */
const live = (record, now) => typeof record?.until === "number" && now < record.until ? record : undefined;

/**
 * The Durable Object of `durableObjectStore`: it keeps the claims and marks of its shard's event ids, each a record
 * `{ state, token, until }`. Its storage calls hold other requests back, so each command (a read, the rule, a write)
 * is atomic. Records that lapsed are swept by an hourly alarm.
 */
export class DedupeObject {
  #storage;
  #alarmChecked = false;

  constructor(ctx) {
    this.#storage = ctx.storage;
  }

  async fetch(request) {
    let command;
    try {
      command = JSON.parse(await request.text());
    } catch {
      command = undefined;
    }
    const { op, eventId, token, ttlMs } = command ?? {};
    const ttlOk = Number.isInteger(ttlMs) && ttlMs > 0;
    const tokenOk = typeof token === "string" && token !== "";
    if (typeof eventId !== "string" || eventId === "" ||
      !(op === "claim" || op === "renew" ? ttlOk && tokenOk : op === "release" ? tokenOk : op === "mark" && ttlOk)) {
      return Response.json({ error: "invalid_input" }, { status: 400 });
    }
    const now = Date.now();
    const held = await this.#storage.get(eventId);
    const current = live(held, now);
    let answer = false;
    let put;
    if (op === "claim") {
      // Wins over nothing live; another's live claim (even this token's) or a mark stays.
      answer = current ? (current.state === "processed" ? "processed" : "claimed") : "won";
      if (!current) put = { state: "claimed", token, until: now + ttlMs };
    } else if (op === "renew") {
      // Only the token's live claim is extended.
      answer = current?.state === "claimed" && current.token === token;
      if (answer) put = { state: "claimed", token, until: now + ttlMs };
    } else if (op === "mark") {
      answer = true;
      put = { state: "processed", until: now + ttlMs };
    } else if (held?.state === "claimed" && held.token === token) {
      // A release deletes only the token's claim (lapsed or not: nobody else holds it until claimed anew).
      answer = true;
      await this.#storage.delete(eventId);
    }
    if (put) {
      await this.#storage.put(eventId, put);
      if (!this.#alarmChecked) {
        this.#alarmChecked = true;
        if ((await this.#storage.getAlarm()) == null) await this.#storage.setAlarm(now + SWEEP_EVERY_MS);
      }
    }
    return Response.json(answer);
  }

  async alarm() {
    let left = false;
    let startAfter;
    for (;;) {
      const page = await this.#storage.list({ limit: 256, startAfter });
      const dead = [];
      for (const [key, record] of page) {
        if (live(record, Date.now())) left = true;
        else dead.push(key);
        startAfter = key;
      }
      for (let i = 0; i < dead.length; i += 128) await this.#storage.delete(dead.slice(i, i + 128));
      if (page.size < 256) break;
    }
    if (left) await this.#storage.setAlarm(Date.now() + SWEEP_EVERY_MS);
  }
}
