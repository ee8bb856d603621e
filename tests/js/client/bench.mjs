// The client's cost per call against its peers, in one Node process, against one local server, one call in flight:
//   - docauto, imported through the built package (`loadSdk`: pkg/, as a user imports "docauto");
//   - openai-node (the `openai` devDependency, pinned in package.json), a Stainless-generated SDK, driven through its
//     generic `get` / `post` / `getAPIList` with `maxRetries: 2` and an `idempotency-key` header on every POST, as
//     Stainless generates it for APIs that take one (`idempotencyHeader`);
//   - raw `fetch` + `response.json()`, what hand-written code does (the floor).
// Four shapes, every side asking the same server for the same answers:
//   - GET a run (`runs.retrieve`);
//   - POST a config whose extraction schema is about 20 KB (`configs.create("extract", ...)`: docauto checks the
//     params and the schema's dialect, keeps the caller's key order and sends an idempotency key);
//   - a wait over three polls (`runs.waitFor`: the n-th long poll of a run answers `queued`, `processing`, then
//     `processed`; the peers poll in a loop until `processed`);
//   - five list pages of 100 runs, every item iterated (`for await` over `runs.list()`, openai-node's `getAPIList`
//     with a cursor page class, raw `fetch` following `cursor`). The server's pages hold 100 items whatever the
//     request says (the service caps `limit` at 50): the bench measures the client's cost per page and item.
// The server is a plain `node:http` server in a child process (so its work does not share this process's event
// loop). The sides alternate call by call, their order rotating, so drift of a shared machine's load hits all alike.
// Each round gives each side's mean wall time per call, over the turns (one call of each side) in which no call took
// over 4 times its side's median (see `round`); the per-round ratios docauto/openai-node and docauto/raw (of times:
// below 1 is faster) are taken, and their median and spread (min to max over the rounds) reported.
// The targets are `cargo xtask bench`'s (xtask/src/bench.rs), which writes their verdicts into PERFORMANCE.md.
// Prints a line per shape, one JSON line for `cargo xtask bench`: BENCH {"bench":"client","rounds":N,"shapes":[{shape,
// name, us:{docauto,openai,raw}, vs_openai:{median,min,max}, vs_raw:{median,min,max}, openai_vs_raw}...]}, and a
// markdown table between `<!-- table -->` and `<!-- /table -->`.
// With `--otel`, a fourth side: docauto given the OpenTelemetry JS SDK's tracer and meter providers (a
// BasicTracerProvider whose SimpleSpanProcessor hands every span to an exporter that drops it, a MeterProvider with a
// reader), so that every call makes its spans and metric points; no provider is registered globally, so the plain
// docauto side is the package with nobody listening, in the same run. Each shape gets `otel_vs_docauto` (the observed
// client's time over the plain one's, median and min to max over the rounds), and the table a column of it.
// Usage: node tests/js/client/bench.mjs [rounds=15] [scale=1] [--otel] (scale multiplies the calls per round)
import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import { AbstractPage } from "openai/core/pagination";
import { VERSION as OPENAI_VERSION } from "openai/version";
import { loadSdk, KEY } from "./harness.mjs";
import { schema20k, startBenchServer } from "./bench-server.mjs";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const OTEL = process.argv.includes("--otel");
const ROUNDS = Number(args[0] ?? 15);
const SCALE = Number(args[1] ?? 1);
const PAGES = 5;
const PAGE_ITEMS = 100;

const sdk = await loadSdk();
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * The OpenTelemetry JS SDK's providers for the `--otel` side: every span processed and handed to an exporter that
 * drops it, every metric point recorded (read only at the end). Given as options: nothing is registered globally.
 */
async function otelProviders() {
  const { BasicTracerProvider, SimpleSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } = await import("@opentelemetry/sdk-metrics");
  const dropping = { export: (spans, done) => done({ code: 0 }), shutdown: async () => {}, forceFlush: async () => {} };
  const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 });
  return {
    tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropping)] }),
    meterProvider: new MeterProvider({ readers: [reader] }),
  };
}

/** openai-node's cursor page for this API: `{ data, has_more, cursor }`, the next page asked with `?cursor=`. */
class RunsPage extends AbstractPage {
  constructor(client, response, body, options) {
    super(client, response, body, options);
    this.data = body.data ?? [];
    this.has_more = body.has_more ?? false;
    this.cursor = body.cursor ?? null;
  }

  getPaginatedItems() {
    return this.data;
  }

  nextPageRequestOptions() {
    if (!this.has_more || !this.cursor) return null;
    return { ...this.options, query: { ...(this.options.query ?? {}), cursor: this.cursor } };
  }
}

/**
 * One round: `calls` calls of each side, interleaved, order rotating; each side's mean microseconds per call. A turn
 * (one call of every side) in which a call took over 4 times its side's median of the round is left out for every
 * side alike: on this shared machine the scheduler sometimes parks the process for milliseconds, which says nothing
 * about the clients (a GC pause or a slow path of one side stays in: they take less than that). Also returns the
 * share of turns left out.
 */
async function round(sides, calls) {
  const times = sides.map(() => new Float64Array(calls));
  for (let i = 0; i < calls; i++) {
    for (let k = 0; k < sides.length; k++) {
      const j = (i + k) % sides.length;
      const t = performance.now();
      await sides[j]();
      times[j][i] = performance.now() - t;
    }
  }
  const limits = times.map((t) => 4 * median(Array.from(t)));
  const total = sides.map(() => 0);
  let kept = 0;
  for (let i = 0; i < calls; i++) {
    if (times.some((t, j) => t[i] > limits[j])) continue;
    kept += 1;
    times.forEach((t, j) => (total[j] += t[i]));
  }
  return { us: total.map((ms) => (ms * 1000) / Math.max(kept, 1)), dropped: 1 - kept / calls };
}

const server = await startBenchServer(PAGES, PAGE_ITEMS);
try {
  const base = server.url;
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: base, logLevel: "off" });
  const observed = OTEL ? new sdk.DocAuto({ apiKey: KEY, baseUrl: base, logLevel: "off", ...(await otelProviders()) }) : undefined;
  const peer = new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 2 });
  // What a Stainless SDK of an API with idempotency keys sets (openai-node's own API has none).
  peer.idempotencyHeader = "idempotency-key";
  const headers = { authorization: `Bearer ${KEY}`, accept: "application/json" };
  const rawJson = async (url, init) => {
    const r = await fetch(url, init);
    if (!r.ok) throw new Error(`raw fetch: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const SCHEMA = schema20k();
  let n = 0;
  const configParams = () => ({ name: `bench ${n++}`, config: { schema: SCHEMA } });
  let polled = 0;
  const pollId = () => `exr_w${polled++}`;

  const shapes = [
    {
      name: "GET a run",
      key: "get",
      calls: 120,
      docauto: () => client.runs.retrieve("exr_get"),
      otel: () => observed.runs.retrieve("exr_get"),
      openai: () => peer.get("/runs/exr_get"),
      raw: () => rawJson(`${base}/v1/runs/exr_get`, { headers }),
      check: (r) => r.status === "processed",
    },
    {
      name: "POST a config (20 KB schema)",
      key: "post",
      calls: 100,
      docauto: () => client.configs.create("extract", configParams()),
      otel: () => observed.configs.create("extract", configParams()),
      openai: () => peer.post("/extract/configs", { body: configParams() }),
      raw: () =>
        rawJson(`${base}/v1/extract/configs`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", "idempotency-key": randomUUID() },
          body: JSON.stringify(configParams()),
        }),
      check: (r) => r.object === "extract_config",
    },
    {
      name: "wait over 3 polls",
      key: "wait",
      calls: 100,
      docauto: () => client.runs.waitFor(pollId()),
      otel: () => observed.runs.waitFor(pollId()),
      openai: async () => {
        const id = pollId();
        for (;;) {
          const r = await peer.get(`/runs/${id}`, { query: { wait: 120 } });
          if (r.status === "processed") return r;
        }
      },
      raw: async () => {
        const id = pollId();
        for (;;) {
          const r = await rawJson(`${base}/v1/runs/${id}?wait=120`, { headers });
          if (r.status === "processed") return r;
        }
      },
      check: (r) => r.status === "processed",
    },
    {
      name: `${PAGES} list pages of ${PAGE_ITEMS} runs`,
      key: "list",
      calls: 20,
      docauto: async () => {
        let items = 0;
        for await (const run of client.runs.list()) items += run.id ? 1 : 0;
        return items;
      },
      otel: async () => {
        let items = 0;
        for await (const run of observed.runs.list()) items += run.id ? 1 : 0;
        return items;
      },
      openai: async () => {
        let items = 0;
        for await (const run of peer.getAPIList("/runs", RunsPage)) items += run.id ? 1 : 0;
        return items;
      },
      raw: async () => {
        let items = 0;
        let cursor;
        for (;;) {
          const page = await rawJson(`${base}/v1/runs${cursor ? `?cursor=${cursor}` : ""}`, { headers });
          for (const run of page.data) items += run.id ? 1 : 0;
          if (!page.has_more || !page.cursor) return items;
          cursor = page.cursor;
        }
      },
      check: (items) => items === PAGES * PAGE_ITEMS,
    },
  ];

  const SIDES = OTEL ? ["docauto", "openai", "raw", "otel"] : ["docauto", "openai", "raw"];
  const results = [];
  for (const shape of shapes) {
    const sides = SIDES.map((s) => shape[s]);
    // Every side gets the right answer before it is timed.
    for (const [i, side] of sides.entries()) {
      const got = await side();
      if (!shape.check(got)) throw new Error(`${shape.name}: ${SIDES[i]} answered ${JSON.stringify(got).slice(0, 200)}`);
    }
    const calls = Math.max(1, Math.round(shape.calls * SCALE));
    await round(sides, Math.ceil(calls / 4));
    const rounds = [];
    const dropped = [];
    for (let r = 0; r < ROUNDS; r++) {
      const one = await round(sides, calls);
      rounds.push(one.us);
      dropped.push(one.dropped);
    }
    const spread = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
    const result = {
      shape: shape.name,
      key: shape.key,
      us: Object.fromEntries(SIDES.map((s, i) => [s, median(rounds.map((r) => r[i]))])),
      vsOpenai: spread(rounds.map(([d, o]) => d / o)),
      vsRaw: spread(rounds.map(([d, , w]) => d / w)),
      openaiVsRaw: median(rounds.map(([, o, w]) => o / w)),
      otelVsDocauto: OTEL ? spread(rounds.map(([d, , , s]) => s / d)) : undefined,
      dropped: dropped.reduce((a, b) => a + b, 0) / dropped.length,
    };
    results.push(result);
    console.log(
      `${shape.name}: docauto ${result.us.docauto.toFixed(0)} us, openai-node ${result.us.openai.toFixed(0)} us, raw ${result.us.raw.toFixed(0)} us; ` +
        `docauto/openai-node ${result.vsOpenai.median.toFixed(3)} (${result.vsOpenai.min.toFixed(3)} to ${result.vsOpenai.max.toFixed(3)}), ` +
        `docauto/raw ${result.vsRaw.median.toFixed(3)} (${result.vsRaw.min.toFixed(3)} to ${result.vsRaw.max.toFixed(3)}); ` +
        `${(result.dropped * 100).toFixed(1)} % of turns left out` +
        (OTEL
          ? `; with an SDK ${result.us.otel.toFixed(0)} us, with/without ${result.otelVsDocauto.median.toFixed(3)} (${result.otelVsDocauto.min.toFixed(3)} to ${result.otelVsDocauto.max.toFixed(3)})`
          : ""),
    );
  }

  const f = (x) => x.toFixed(2);
  const ratio = (s) => `${f(s.median)} (${f(s.min)} to ${f(s.max)})`;
  const lines = [
    `\`node tests/js/client/bench.mjs ${ROUNDS} ${SCALE}\`: Node ${process.version}, openai ${OPENAI_VERSION}, one local \`node:http\` server in a child process; wall time per call, median of ${ROUNDS} interleaved rounds; a turn with a call over 4 times its side's median left out for all sides (${(100 * results.reduce((a, r) => a + r.dropped, 0) / results.length).toFixed(1)} % of turns); ratios are docauto's time over the peer's, median and min to max over the rounds (below 1 docauto is faster).`,
    "",
    `| shape | docauto | openai-node | raw \`fetch\` | docauto / openai-node | docauto / raw \`fetch\` | openai-node / raw \`fetch\` |${OTEL ? " docauto with an SDK | with / without an SDK |" : ""}`,
    `| --- | --- | --- | --- | --- | --- | --- |${OTEL ? " --- | --- |" : ""}`,
    ...results.map(
      (r) =>
        `| ${r.shape} | ${r.us.docauto.toFixed(0)} us | ${r.us.openai.toFixed(0)} us | ${r.us.raw.toFixed(0)} us | ${ratio(r.vsOpenai)} | ` +
        `${ratio(r.vsRaw)} | ${f(r.openaiVsRaw)} |${OTEL ? ` ${r.us.otel.toFixed(0)} us | ${ratio(r.otelVsDocauto)} |` : ""}`,
    ),
  ];
  console.log(
    `BENCH ${JSON.stringify({
      bench: "client",
      rounds: ROUNDS,
      openai: OPENAI_VERSION,
      shapes: results.map((r) => ({
        shape: r.key,
        name: r.shape,
        us: r.us,
        vs_openai: r.vsOpenai,
        vs_raw: r.vsRaw,
        openai_vs_raw: r.openaiVsRaw,
        ...(OTEL ? { otel_vs_docauto: r.otelVsDocauto } : {}),
      })),
    })}`,
  );
  console.log("<!-- table -->");
  console.log(lines.join("\n"));
  console.log("<!-- /table -->");
} finally {
  server.stop();
}
