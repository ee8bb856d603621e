// Edge isolates (workerd through miniflare): one module-scope verifier serves concurrent requests while the key-set
// server is slow, and a key-set fetch begun by a request that has ended does not strand the others (workerd forbids
// waiting on another request's I/O and cancels an ended request's fetch). The key-set server is a node:http server
// in this process that delays its answer; workerd reaches it on loopback. Every request must get its verdict within a
// bound set by the verifier's timeoutMs; a request that does not is reported as hanging.
import { Miniflare } from "miniflare";
import { createServer } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { writeWorker } from "./bundle.mjs";
import { loadFixtures, report } from "./common.mjs";
import { Checks, assert } from "./suite.mjs";

const fx = loadFixtures();
const dir = fileURLToPath(new URL("../../target/docauto-js/edge-isolate/", import.meta.url));
const TIMEOUT_MS = 1500;
const DELAY_MS = 700;
// Joining a fetch that never reports costs at most one timeoutMs, fetching in this request at most another.
const BOUND_MS = 2 * TIMEOUT_MS + 2500;

// The module-scope verifier of the Cloudflare Worker recipe (README.md, docs/webhooks.md). `/kick` starts a key refresh and answers at once
// without awaiting it: the fetch belongs to a request that has ended.
const WORKER = `import { WebhookVerifier } from "docauto/webhooks";
let verifier;
export default {
  async fetch(request, env) {
    verifier ??= new WebhookVerifier({
      jwksUrl: env.JWKS_URL, now: Number(env.NOW), timeoutMs: Number(env.TIMEOUT_MS), dedupe: true,
    });
    if (new URL(request.url).pathname === "/kick") {
      verifier.refreshKeys().catch(() => {});
      return new Response("kicked");
    }
    try {
      const event = await verifier.verifyRequest(request);
      return Response.json({ ok: true, eventId: event.eventId, duplicate: event.duplicate });
    } catch (err) {
      return Response.json({ ok: false, code: err.code ?? String(err) });
    }
  },
};
`;

async function slowJwks() {
  const s = { count: 0, delay: DELAY_MS };
  const server = createServer((req, res) => {
    s.count++;
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: fx.jwks.keys }));
    }, s.delay);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  s.url = `http://127.0.0.1:${server.address().port}/v1/webhooks/jwks.json`;
  s.close = () => {
    server.closeAllConnections?.();
    return new Promise((r) => server.close(() => r()));
  };
  return s;
}

mkdirSync(dir, { recursive: true });
writeFileSync(dir + "entry.mjs", WORKER);
await writeWorker(dir + "entry.mjs", dir);

const caseNamed = (prefix) => {
  const c = fx.cases.find((x) => x.name.startsWith(prefix));
  if (!c) throw new Error(`no fixture case "${prefix}"`);
  return c;
};
const wrongKey = caseNamed("wrong key under a known kid");
const unknownKid = caseNamed("unknown kid is unknown_key");
const good = { body: fx.goodBody, header: fx.goodToken, expect: { ok: true } };
const bad = (c) => ({ body: c.body, header: c.header, expect: { ok: false, code: c.expect.code } });

/** A fresh isolate (module state) per scenario. */
async function isolate(srv, compatibilityDate) {
  return new Miniflare({
    modules: true,
    scriptPath: dir + "worker.mjs",
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate,
    bindings: { JWKS_URL: srv.url, NOW: String(fx.now), TIMEOUT_MS: String(TIMEOUT_MS) },
  });
}

/** Sends one delivery; resolves to { verdict, ms } or { hung: true } past BOUND_MS. */
async function deliver(mf, d) {
  const t0 = performance.now();
  const sent = mf
    .dispatchFetch("http://receiver.example/webhooks", {
      method: "POST",
      headers: { "x-svc-signature": d.header },
      body: d.body,
    })
    .then(async (res) => ({ verdict: JSON.parse(await res.text()), ms: performance.now() - t0 }))
    .catch((e) => ({ verdict: { ok: false, code: `dispatch failed: ${e.message}` }, ms: performance.now() - t0 }));
  let timer;
  const hung = new Promise((r) => (timer = setTimeout(() => r({ hung: true }), BOUND_MS)));
  try {
    return await Promise.race([sent, hung]);
  } finally {
    clearTimeout(timer);
  }
}

function checkVerdicts(deliveries, results) {
  const problems = [];
  results.forEach((r, i) => {
    const want = deliveries[i].expect;
    if (r.hung) return problems.push(`#${i} got no answer within ${BOUND_MS} ms`);
    const v = r.verdict;
    if (want.ok ? v.ok !== true : v.ok !== false || v.code !== want.code) {
      problems.push(`#${i} expected ${want.ok ? "ok" : want.code}, got ${JSON.stringify(v)}`);
    }
  });
  assert(problems.length === 0, problems.join("; "));
}

const t = new Checks(console.log);
const srv = await slowJwks();
// Both sides of workerd's `handle_cross_request_promise_resolution` (on by default from 2024-10-14): before it, a
// promise created by one request and resolved by another never wakes the first (it fails with "Promise will never
// complete"), and many Workers still run on an older compatibility date.
try {
  for (const date of ["2025-09-01", "2024-01-01"]) {
    await t.run(`workerd ${date}: 8 concurrent requests on one module-scope verifier while the key set is slow (one claim wins)`, async () => {
      srv.count = 0;
      const mf = await isolate(srv, date);
      try {
        const deliveries = [good, good, bad(wrongKey), good, bad(unknownKid), good, good, good];
        const results = await Promise.all(deliveries.map((d) => deliver(mf, d)));
        checkVerdicts(deliveries, results);
        assert(srv.count === 1, `the key set was fetched ${srv.count} times (single flight wants 1)`);
        // Six concurrent copies of one event across requests: the isolate's dedupe claim lets exactly one through.
        const firsts = results.filter((r) => r.verdict.ok && r.verdict.duplicate === false).length;
        assert(firsts === 1, `${firsts} of the concurrent copies of one event were not flagged duplicate`);
        const later = await deliver(mf, good);
        checkVerdicts([good], [later]);
        assert(srv.count === 1, "a later request fetched again instead of using the shared cache");
      } finally {
        await mf.dispose();
      }
    });

    await t.run(`workerd ${date}: a fetch begun by a request that ended does not strand concurrent requests`, async () => {
      srv.count = 0;
      const mf = await isolate(srv, date);
      try {
        const kick = await mf.dispatchFetch("http://receiver.example/kick");
        assert((await kick.text()) === "kicked", "the kick request did not answer");
        const deliveries = [good, bad(wrongKey), good, good, bad(unknownKid)];
        const results = await Promise.all(deliveries.map((d) => deliver(mf, d)));
        checkVerdicts(deliveries, results);
        const slowest = Math.max(...results.map((r) => r.ms ?? Infinity));
        console.log(`     (slowest answer ${slowest.toFixed(0)} ms, key set fetched ${srv.count} times)`);
        assert(srv.count <= 2, `the key set was fetched ${srv.count} times (the ended request's, then one more)`);
        const later = await deliver(mf, good);
        checkVerdicts([good], [later]);
      } finally {
        await mf.dispose();
      }
    });

    await t.run(`workerd ${date}: one delivery after a request that ended mid-fetch gets its verdict`, async () => {
      srv.count = 0;
      const mf = await isolate(srv, date);
      try {
        await (await mf.dispatchFetch("http://receiver.example/kick")).text();
        const r = await deliver(mf, good);
        checkVerdicts([good], [r]);
      } finally {
        await mf.dispose();
      }
    });
  }
} finally {
  await srv.close();
}
report("workerd edge isolates (miniflare)", t);
process.exit(t.failed === 0 ? 0 : 1);
