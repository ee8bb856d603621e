// The client's cost over raw `fetch`, same process, same server, one call in flight, for three shapes of call:
//   - a GET (`agents.retrieve`, against the emulator);
//   - a POST with a 20 KB extraction schema (`configs.create("extract", ...)`, against the emulator: the SDK checks the
//     schema's dialect, writes the body in the caller's key order and sends an idempotency key);
//   - `runs.waitFor` over a run that finishes after 3 polls (a scripted `node:http` server in a child process answers
//     the n-th long poll of a run `queued`, `processing`, then `processed`), against a raw loop of the same 3 GETs.
// The raw side does what hand-written code does: `fetch` with the same headers and body, then `JSON.parse` of the
// text. The two sides alternate call by call (their order rotating), so drift of a shared machine's load hits both
// alike. Each round gives each side's mean time per call; the per-round ratio sdk/raw (of calls per second) is taken,
// and the median round per shape is reported. Every SDK attempt runs under its own AbortController (one attempt in
// flight); for context, the same pass of raw `fetch` against raw `fetch` with `AbortSignal.timeout` shows what a
// signal alone costs a raw call.
// Prints a human line per shape and, last, one JSON line for `cargo xtask bench`:
//   {"bench":"client","routes":[{route, sdk_calls_per_s, raw_calls_per_s, ratio, overhead_pct}...],"ratio":R,"overhead_pct":P}
// Usage: node tests/js/client/bench.mjs [callsPerRound=200] [rounds=7]
import { spawn } from "node:child_process";
import { loadSdk, startEmulator, KEY } from "./harness.mjs";

const CALLS = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 7);

const sdk = await loadSdk();
const emu = await startEmulator(["--rate-limit", "100000000"]);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One round: `CALLS` calls of each side, interleaved; returns each side's mean milliseconds per call. */
async function round(sides) {
  const total = sides.map(() => 0);
  for (let i = 0; i < CALLS; i++) {
    for (let k = 0; k < sides.length; k++) {
      const j = (i + k) % sides.length;
      const t = performance.now();
      await sides[j]();
      total[j] += performance.now() - t;
    }
  }
  return total.map((ms) => ms / CALLS);
}

/** A ~20 KB extraction schema in the dialect (flat properties with descriptions), in a non-alphabetical order. */
function schema20k() {
  const properties = {};
  for (let i = 0; JSON.stringify({ type: "object", properties }).length < 20_000; i++) {
    properties[`field_${(i * 7919) % 1000}_${i}`] = {
      type: i % 3 === 0 ? ["number", "null"] : "string",
      description: `The value printed next to label ${i} on the first page of the invoice, as written.`,
    };
  }
  return { type: "object", properties };
}

/** The poll server: the n-th GET of /v1/runs/:id answers queued, processing, then processed (a child process). */
async function startPollServer() {
  const code = `
    const { createServer } = require("node:http");
    const seen = new Map();
    const statuses = ["queued", "processing", "processed"];
    const server = createServer((req, res) => {
      const id = req.url.split("?")[0].split("/").pop();
      const n = seen.get(id) ?? 0;
      seen.set(id, n + 1);
      const body = JSON.stringify({ object: "extract_run", id, status: statuses[Math.min(n, 2)] });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    });
    server.keepAliveTimeout = 60_000;
    server.listen(0, "127.0.0.1", () => console.log("port " + server.address().port));
  `;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      const m = /port (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", (c) => reject(new Error(`poll server exited ${c}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

const poll = await startPollServer();
try {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  const pollClient = new sdk.DocAuto({ apiKey: KEY, baseUrl: poll.url, logLevel: "off" });
  const headers = { authorization: `Bearer ${KEY}`, accept: "application/json" };
  const rawGet = async (base, path, signal) => {
    const r = await fetch(`${base}${path}`, signal ? { headers, signal: AbortSignal.timeout(600_000) } : { headers });
    if (!r.ok) throw new Error(`raw fetch: ${r.status}`);
    return JSON.parse(await r.text());
  };
  const SCHEMA = schema20k();
  let n = 0;
  const rawPost = async () => {
    const body = JSON.stringify({ name: `bench ${n++}`, config: { schema: SCHEMA } });
    const r = await fetch(`${emu.baseUrl}/v1/extract/configs`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "idempotency-key": `bench-${n}-${Math.random()}` },
      body,
    });
    if (!r.ok) throw new Error(`raw fetch: ${r.status} ${await r.text()}`);
    return JSON.parse(await r.text());
  };
  let run = 0;
  const rawWait = async () => {
    const id = `exr_raw${run++}`;
    for (;;) {
      const body = await rawGet(poll.url, `/v1/runs/${id}?wait=120`);
      if (body.status === "processed") return body;
    }
  };
  const shapes = [
    {
      name: "GET /v1/agents/:id",
      sdk: () => client.agents.retrieve("agt_contract_review"),
      raw: () => rawGet(emu.baseUrl, "/v1/agents/agt_contract_review"),
      context: true,
    },
    {
      name: "POST /v1/extract/configs (20 KB schema)",
      sdk: () => client.configs.create("extract", { name: `bench ${n++}`, config: { schema: SCHEMA } }),
      raw: rawPost,
    },
    {
      name: "runs.waitFor (3 polls)",
      sdk: () => pollClient.runs.waitFor(`exr_sdk${run++}`),
      raw: rawWait,
    },
  ];
  console.log(`schema: ${JSON.stringify(SCHEMA).length} bytes`);
  const results = [];
  for (const shape of shapes) {
    const sides = [shape.sdk, shape.raw];
    for (let i = 0; i < 50; i++) for (const side of sides) await side();
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await round(sides));
    const ratio = median(rounds.map(([s, w]) => w / s));
    let signalCost;
    if (shape.context) {
      const context = [() => rawGet(emu.baseUrl, "/v1/agents/agt_contract_review"), () => rawGet(emu.baseUrl, "/v1/agents/agt_contract_review", true)];
      const contextRounds = [];
      for (let r = 0; r < Math.ceil(ROUNDS / 2); r++) contextRounds.push(await round(context));
      signalCost = median(contextRounds.map(([w, t]) => t / w - 1));
    }
    const result = {
      route: shape.name,
      sdk: 1000 / median(rounds.map(([s]) => s)),
      raw: 1000 / median(rounds.map(([, w]) => w)),
      ratio,
      signalCost,
    };
    console.log(
      `${shape.name}: sdk ${result.sdk.toFixed(0)} calls/s, raw fetch ${result.raw.toFixed(0)} calls/s, ` +
        `sdk/raw ${ratio.toFixed(3)} (overhead ${((1 / ratio - 1) * 100).toFixed(1)} %, median of ${ROUNDS} rounds)` +
        (signalCost === undefined ? "" : `; context: a timeout signal adds ${(signalCost * 100).toFixed(1)} % to a raw fetch`),
    );
    results.push(result);
  }
  const over = results.filter((r) => (1 / r.ratio - 1) * 100 >= 10);
  console.log(
    `goal, under 10 % overhead on each shape: ${over.length === 0 ? "met" : "NOT met"}` +
      (over.length === 0 ? "" : ` (over: ${over.map((r) => `${r.route} ${((1 / r.ratio - 1) * 100).toFixed(1)} %`).join(", ")})`),
  );
  const mean = (f) => results.reduce((a, r) => a + f(r), 0) / results.length;
  const ratio = mean((r) => r.ratio);
  console.log(
    JSON.stringify({
      bench: "client",
      routes: results.map((r) => ({
        route: r.route,
        sdk_calls_per_s: Math.round(r.sdk),
        raw_calls_per_s: Math.round(r.raw),
        ratio: Number(r.ratio.toFixed(3)),
        overhead_pct: Number(((1 / r.ratio - 1) * 100).toFixed(1)),
        ...(r.signalCost === undefined ? {} : { timeout_signal_cost_pct: Number((r.signalCost * 100).toFixed(1)) }),
      })),
      ratio: Number(ratio.toFixed(3)),
      overhead_pct: Number(((1 / ratio - 1) * 100).toFixed(1)),
    }),
  );
} finally {
  poll.stop();
  await emu.stop();
}
