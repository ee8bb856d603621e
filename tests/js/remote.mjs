// Remote key-set behaviour, against a local JWKS server on 127.0.0.1 that counts requests.
// Uses node:http, so it runs in Node, Deno and Bun.
import { createServer } from "node:http";
import { Checks, assert, checkEnvelope, rejectsWith } from "./suite.mjs";

/** A JWKS server whose behaviour each check sets; `count` counts requests to the JWKS path. */
async function jwksServer() {
  const s = {
    count: 0,
    paths: [],
    mode: "ok",
    keys: null,
    headers: {},
    hang: [],
  };
  const server = createServer((req, res) => {
    s.count++;
    s.paths.push(req.url);
    if (s.mode === "hang") {
      s.hang.push(res);
      return;
    }
    if (s.mode === "500") {
      res.writeHead(500, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    if (s.mode === "huge") {
      // A key set that never ends: 64 MiB of padding after a valid start, streamed.
      res.writeHead(200, { "content-type": "application/json" });
      s.sent = 0;
      const chunk = " ".repeat(64 * 1024);
      const push = () => {
        while (s.sent < 64 * 1024 * 1024) {
          s.sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", push);
        }
        res.end();
      };
      res.write(`{"keys":${JSON.stringify(s.keys)}`);
      push();
      res.on("close", () => (s.closed = true));
      return;
    }
    if (s.mode === "html") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>not json</html>");
      return;
    }
    res.writeHead(200, { "content-type": "application/json", ...s.headers });
    res.end(JSON.stringify({ keys: s.keys }));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  s.url = `http://127.0.0.1:${server.address().port}`;
  s.reset = (keys) => {
    s.count = 0;
    s.paths = [];
    s.mode = "ok";
    s.keys = keys;
    s.headers = {};
  };
  s.close = () => {
    for (const r of s.hang) r.destroy();
    server.closeAllConnections?.();
    return new Promise((r) => server.close(() => r()));
  };
  return s;
}

export async function runRemoteSuite(docauto, fx, log = console.log) {
  const t = new Checks(log);
  const { WebhookVerifier } = docauto;
  const srv = await jwksServer();
  const jwksUrl = () => `${srv.url}/v1/webhooks/jwks.json`;
  const body = fx.goodBody;
  try {
    await t.run("remote: first verify fetches the key set once, later verifies use the cache", async () => {
      srv.reset(fx.jwks.keys);
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now });
      checkEnvelope(await v.verify(body, fx.goodToken), fx.goodEnvelope);
      checkEnvelope(await v.verify(body, fx.goodToken), fx.goodEnvelope);
      assert(srv.count === 1, `${srv.count} fetches`);
    });

    await t.run("remote: baseUrl adds /v1/webhooks/jwks.json", async () => {
      srv.reset(fx.jwks.keys);
      const v = new WebhookVerifier({ baseUrl: srv.url, now: fx.now });
      await v.verify(body, fx.goodToken);
      assert(srv.paths.length === 1 && srv.paths[0] === "/v1/webhooks/jwks.json", `paths ${srv.paths}`);
    });

    await t.run("remote: 20 concurrent verifies share one fetch (single-flight)", async () => {
      srv.reset(fx.jwks.keys);
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now });
      const all = await Promise.all(Array.from({ length: 20 }, () => v.verify(body, fx.goodToken)));
      all.forEach((e) => checkEnvelope(e, fx.goodEnvelope));
      assert(srv.count === 1, `${srv.count} fetches`);
    });

    await t.run("remote: the cache lasts cacheTtlSeconds, then one refetch", async () => {
      srv.reset(fx.jwks.keys);
      let now = fx.now;
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: () => now, cacheTtlSeconds: 600 });
      await v.verify(body, fx.longToken);
      now += 500;
      await v.verify(body, fx.longToken);
      assert(srv.count === 1, `${srv.count} fetches within the ttl`);
      now += 200;
      await v.verify(body, fx.longToken);
      assert(srv.count === 2, `${srv.count} fetches after the ttl`);
    });

    await t.run("remote: default cache lifetime is one hour", async () => {
      srv.reset(fx.jwks.keys);
      let now = fx.now;
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: () => now });
      await v.verify(body, fx.longToken);
      now += 3500;
      await v.verify(body, fx.longToken);
      assert(srv.count === 1, `${srv.count} fetches before an hour`);
      now += 200;
      await v.verify(body, fx.longToken);
      assert(srv.count === 2, `${srv.count} fetches after an hour`);
    });

    await t.run("remote: Cache-Control max-age overrides the ttl", async () => {
      srv.reset(fx.jwks.keys);
      srv.headers = { "cache-control": "public, max-age=120" };
      let now = fx.now;
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: () => now });
      await v.verify(body, fx.longToken);
      now += 100;
      await v.verify(body, fx.longToken);
      assert(srv.count === 1, `${srv.count} fetches within max-age`);
      now += 40;
      await v.verify(body, fx.longToken);
      assert(srv.count === 2, `${srv.count} fetches after max-age`);
    });

    await t.run("remote: unknown kid refetches once after the cooldown (key rotation)", async () => {
      srv.reset(fx.jwks.keys);
      let now = fx.now;
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: () => now });
      await v.verify(body, fx.goodToken);
      srv.keys = [...fx.jwks.keys, fx.rotatedJwk];
      now += 31;
      checkEnvelope(await v.verify(body, fx.rotatedToken), fx.goodEnvelope);
      assert(srv.count === 2, `${srv.count} fetches`);
    });

    await t.run("remote: a flood of random kids makes at most one fetch per cooldown", async () => {
      srv.reset(fx.jwks.keys);
      let now = fx.now;
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: () => now, cooldownSeconds: 30 });
      await v.verify(body, fx.goodToken);
      const [, p, s] = fx.goodToken.split(".");
      const forged = () => {
        const h = btoa(JSON.stringify({ alg: "ES256", kid: `rnd${Math.random()}` }))
          .replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
        return `${h}.${p}.${s}`;
      };
      now += 31;
      await Promise.all(Array.from({ length: 50 }, () => rejectsWith(v.verify(body, forged()), "unknown_key")));
      for (let i = 0; i < 50; i++) await rejectsWith(v.verify(body, forged()), "unknown_key");
      assert(srv.count <= 2, `${srv.count} fetches for 100 random kids in one cooldown`);
      now += 31;
      for (let i = 0; i < 20; i++) await rejectsWith(v.verify(body, forged()), "unknown_key");
      assert(srv.count <= 3, `${srv.count} fetches after a second cooldown`);
    });

    await t.run("remote: a hanging server is jwks_unavailable after timeoutMs", async () => {
      srv.reset(fx.jwks.keys);
      srv.mode = "hang";
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now, timeoutMs: 300 });
      const t0 = Date.now();
      await rejectsWith(v.verify(body, fx.goodToken), "jwks_unavailable");
      const ms = Date.now() - t0;
      assert(ms < 3000, `took ${ms} ms`);
    });

    await t.run("remote: HTTP 500 is jwks_unavailable", async () => {
      srv.reset(fx.jwks.keys);
      srv.mode = "500";
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now });
      await rejectsWith(v.verify(body, fx.goodToken), "jwks_unavailable");
    });

    await t.run("remote: concurrent refreshKeys share one failing fetch and all reject (jwks_unavailable)", async () => {
      srv.reset(fx.jwks.keys);
      srv.mode = "500";
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now });
      const all = [v.refreshKeys(), v.refreshKeys(), v.verify(body, fx.goodToken)];
      for (const p of all) await rejectsWith(p, "jwks_unavailable");
      assert(srv.count === 1, `fetched ${srv.count} times`);
    });

    await t.run("remote: a body that is not JSON is jwks_unavailable", async () => {
      srv.reset(fx.jwks.keys);
      srv.mode = "html";
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now });
      await rejectsWith(v.verify(body, fx.goodToken), "jwks_unavailable");
    });

    await t.run("remote: a key-set response over 256 KiB is jwks_unavailable, read no further", async () => {
      srv.reset(fx.jwks.keys);
      srv.mode = "huge";
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now });
      await rejectsWith(v.verify(body, fx.goodToken), "jwks_unavailable");
      await new Promise((r) => setTimeout(r, 200));
      assert(srv.sent < 16 * 1024 * 1024, `server sent ${srv.sent} bytes: the response was read on`);
    });

    await t.run("remote: an unreachable address is jwks_unavailable", async () => {
      const v = new WebhookVerifier({ jwksUrl: "http://127.0.0.1:9/jwks.json", now: fx.now, timeoutMs: 1000 });
      await rejectsWith(v.verify(body, fx.goodToken), "jwks_unavailable");
    });

    await t.run("remote: served keys of the wrong kty/crv/alg/use are ignored", async () => {
      srv.reset([
        { ...fx.jwks.keys[0], use: "enc" },
        { ...fx.jwks.keys[0], kid: "x", crv: "P-384" },
        { kty: "RSA", kid: "r", n: "AQAB", e: "AQAB" },
        fx.jwks.keys[1],
      ]);
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now });
      await rejectsWith(v.verify(body, fx.goodToken), "unknown_key");
      checkEnvelope(await v.verify(body, fx.longToken2), fx.goodEnvelope);
    });

    await t.run("remote: a custom fetch is used", async () => {
      srv.reset(fx.jwks.keys);
      let calls = 0;
      const v = new WebhookVerifier({
        jwksUrl: jwksUrl(),
        now: fx.now,
        fetch: (input, init) => (calls++, fetch(input, init)),
      });
      await v.verify(body, fx.goodToken);
      assert(calls === 1 && srv.count === 1, `custom fetch calls ${calls}, server ${srv.count}`);
    });

    await t.run("remote: refreshKeys forces a fetch; then verifySync and exportKeys work", async () => {
      srv.reset(fx.jwks.keys);
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now });
      await v.refreshKeys();
      assert(srv.count === 1, `${srv.count} fetches`);
      checkEnvelope(v.verifySync(body, fx.goodToken), fx.goodEnvelope);
      const kids = v.exportKeys().keys.map((k) => k.kid).sort();
      assert(kids.join() === "k1,k2", `exported ${kids}`);
    });

    await t.run("remote: an exported key set keeps its age; seeded two hours later it is refetched, a removed key rejected", async () => {
      const realNow = Date.now;
      try {
        let clock = fx.now * 1000;
        Date.now = () => clock;
        srv.reset(fx.jwks.keys);
        const now = () => Date.now() / 1000;
        const a = new WebhookVerifier({ jwksUrl: jwksUrl(), now });
        await a.verify(body, fx.goodToken);
        const saved = a.exportKeys();
        assert(saved.fetchedAt === fx.now && saved.staleAt === fx.now + 3600,
          `exported fetchedAt ${saved.fetchedAt}, staleAt ${saved.staleAt}`);
        // Seeded within the hour: no fetch, the remaining freshness is kept.
        clock += 1800 * 1000;
        const b = new WebhookVerifier({ jwksUrl: jwksUrl(), now, jwks: JSON.parse(JSON.stringify(saved)) });
        await rejectsWith(b.verify(body, fx.goodToken), "expired");
        assert(srv.count === 1, `seeded fresh keys were refetched (${srv.count} fetches)`);
        assert(b.exportKeys().staleAt === fx.now + 3600, `seed restarted the freshness: ${b.exportKeys().staleAt}`);
        // The service removes k1; two hours after the export a new verifier is seeded with it.
        srv.keys = fx.jwks.keys.filter((k) => k.kid !== "k1");
        clock = (fx.now + 7200) * 1000;
        const c = new WebhookVerifier({ jwksUrl: jwksUrl(), now, jwks: saved });
        await rejectsWith(c.verify(body, fx.goodToken), "unknown_key");
        assert(srv.count === 2, `expected one refetch, server saw ${srv.count}`);
      } finally {
        Date.now = realNow;
      }
    });

    await t.run("remote: a plain JWKS seed (no age) is fetched before it is trusted", async () => {
      srv.reset(fx.jwks.keys.filter((k) => k.kid !== "k1"));
      const v = new WebhookVerifier({ jwksUrl: jwksUrl(), now: fx.now, jwks: fx.jwks });
      await rejectsWith(v.verify(body, fx.goodToken), "unknown_key");
      assert(srv.count === 1, `${srv.count} fetches`);
    });
  } finally {
    await srv.close();
  }
  return { passed: t.passed, failed: t.failed };
}
