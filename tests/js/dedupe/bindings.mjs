// The store of each binding, written as docs/webhooks.md, "Stores", gives it:
// `redisStore` through node-redis, ioredis and @upstash/redis, `postgresStore` through node-postgres, and the
// README's old unfenced Redis recipe (no `renew`, a `release` without a token), kept as a control.
import { redisStore, postgresStore } from "docauto/webhooks";

export const UPSTASH_TOKEN = "test-token-of-the-stand-in";

/** `{ store, close() }` for `name`, connected to `engines` (`{ redis, postgres, upstash }` addresses). */
export async function makeBinding(name, engines) {
  switch (name) {
    case "node-redis": {
      const { createClient } = await import("redis");
      const redis = createClient({ url: engines.redis });
      redis.on("error", () => {});
      await redis.connect();
      const store = redisStore({ eval: (script, keys, args) => redis.eval(script, { keys, arguments: args }) });
      return { store, close: () => redis.quit(), raw: (args) => redis.sendCommand(args) };
    }
    case "ioredis": {
      const { Redis } = await import("ioredis");
      const redis = new Redis(engines.redis, { lazyConnect: true, maxRetriesPerRequest: 1 });
      redis.on("error", () => {});
      await redis.connect();
      const store = redisStore({ eval: (script, keys, args) => redis.eval(script, keys.length, ...keys, ...args) });
      return { store, close: () => redis.quit(), raw: ([cmd, ...args]) => redis.call(cmd, ...args) };
    }
    case "upstash": {
      const { Redis } = await import("@upstash/redis");
      const redis = new Redis({ url: engines.upstash, token: UPSTASH_TOKEN, retry: false });
      const store = redisStore({ eval: (script, keys, args) => redis.eval(script, keys, args) });
      return { store, close: async () => {} };
    }
    case "pg": {
      const { default: pg } = await import("pg");
      const pool = new pg.Pool({ connectionString: engines.postgres, max: 4 });
      pool.on("error", () => {});
      const store = postgresStore({ query: (text, params) => pool.query(text, params) });
      return { store, close: () => pool.end(), raw: (text) => pool.query(text) };
    }
    case "unfenced-node-redis": {
      // The README's recipe before fenced claims (0.2.x): SET NX claims, a release that deletes any claim, no renew.
      const { createClient } = await import("redis");
      const redis = createClient({ url: engines.redis });
      redis.on("error", () => {});
      await redis.connect();
      const store = {
        claim: async (id, ttlSeconds) =>
          (await redis.set(`old:${id}`, "claimed", { NX: true, EX: Math.ceil(ttlSeconds) })) === "OK" ||
          ((await redis.get(`old:${id}`)) === "done" ? "processed" : false),
        release: async (id) => {
          await redis.eval(`if redis.call("GET", KEYS[1]) == "claimed" then return redis.call("DEL", KEYS[1]) end return 0`,
            { keys: [`old:${id}`] });
        },
        add: async (id, ttlSeconds) => void (await redis.set(`old:${id}`, "done", { EX: ttlSeconds })),
      };
      return { store, close: () => redis.quit() };
    }
    default:
      throw new Error(`unknown binding ${name}`);
  }
}
