// Calls per second through the SDK versus raw `fetch` (+ `JSON.parse` of the text) to the same routes (GET /v1/agents
// and GET /v1/agents/:id), same process, against the emulator, one call in flight. The two alternate call by call
// (their order rotating), so drift of a shared machine's load hits both alike. Each round gives each side's mean time
// per call; the per-round ratio sdk/raw (of calls per second) is taken, and the median round per route is reported.
// The overall ratio is the mean of the routes' medians.
//
// Then, for context, a second pass of the same shape: raw `fetch` versus raw `fetch` with
// `AbortSignal.timeout(600_000)`, what hand-written code with a timeout pays (the runtime's abort listener per
// request; the SDK hands `fetch` no signal unless the caller gives one).
// Prints a human line per route and, last, one JSON line for `cargo xtask bench`:
//   {"bench":"client","routes":[...],"sdk_calls_per_s":N,"raw_calls_per_s":N,"ratio":R,"overhead_pct":P}
// Usage: node tests/js/client/bench.mjs [callsPerRound=300] [rounds=9]
import { loadSdk, startEmulator, KEY } from "./harness.mjs";

const CALLS = Number(process.argv[2] ?? 300);
const ROUNDS = Number(process.argv[3] ?? 9);

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

try {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  const headers = { authorization: `Bearer ${KEY}`, accept: "application/json" };
  const raw = async (path) => {
    const r = await fetch(`${emu.baseUrl}${path}`, { headers });
    if (!r.ok) throw new Error(`raw fetch: ${r.status}`);
    return JSON.parse(await r.text());
  };
  const rawTimeout = async (path) => {
    const r = await fetch(`${emu.baseUrl}${path}`, { headers, signal: AbortSignal.timeout(600_000) });
    if (!r.ok) throw new Error(`raw fetch: ${r.status}`);
    return JSON.parse(await r.text());
  };
  const routes = [
    { name: "GET /v1/agents", sdk: () => client.agents.list(), path: "/v1/agents" },
    {
      name: "GET /v1/agents/:id",
      sdk: () => client.agents.retrieve("agt_contract_review"),
      path: "/v1/agents/agt_contract_review",
    },
  ];
  const results = [];
  for (const route of routes) {
    const sides = [route.sdk, () => raw(route.path)];
    for (let i = 0; i < 100; i++) for (const side of sides) await side();
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await round(sides));
    const ratio = median(rounds.map(([s, w]) => w / s));
    const context = [() => raw(route.path), () => rawTimeout(route.path)];
    const contextRounds = [];
    for (let r = 0; r < Math.ceil(ROUNDS / 2); r++) contextRounds.push(await round(context));
    const timeoutCost = median(contextRounds.map(([w, t]) => t / w - 1));
    const result = {
      route: route.name,
      sdk: 1000 / median(rounds.map(([s]) => s)),
      raw: 1000 / median(rounds.map(([, w]) => w)),
      ratio,
      timeoutCost,
    };
    console.log(
      `${route.name}: sdk ${result.sdk.toFixed(0)} calls/s, raw fetch ${result.raw.toFixed(0)} calls/s, ` +
        `sdk/raw ${ratio.toFixed(3)} (median of ${ROUNDS} rounds); context: a timeout signal adds ` +
        `${(timeoutCost * 100).toFixed(1)} % to a raw fetch`,
    );
    results.push(result);
  }
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
        timeout_signal_cost_pct: Number((r.timeoutCost * 100).toFixed(1)),
      })),
      sdk_calls_per_s: Math.round(mean((r) => r.sdk)),
      raw_calls_per_s: Math.round(mean((r) => r.raw)),
      ratio: Number(ratio.toFixed(3)),
      overhead_pct: Number(((1 / ratio - 1) * 100).toFixed(1)),
    }),
  );
} finally {
  await emu.stop();
}
