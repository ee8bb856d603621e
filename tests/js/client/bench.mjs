// Calls per second through the SDK versus raw `fetch` (+ `JSON.parse` of the text) to the same route (GET /v1/agents
// and GET /v1/agents/:id), same process, against the emulator. One call in flight; SDK and raw calls alternate one by
// one, so drift of a shared machine's load hits both alike; each side's rate is calls over its own summed time,
// per round, and the median round is reported.
// Prints a human line per route and, last, one JSON line for `cargo xtask bench`:
//   {"bench":"client","routes":[...],"sdk_calls_per_s":N,"raw_calls_per_s":N,"ratio":R,"overhead_pct":P}
// Usage: node tests/js/client/bench.mjs [callsPerRound=300] [rounds=5]
import { loadSdk, startEmulator, KEY } from "./harness.mjs";

const CALLS = Number(process.argv[2] ?? 300);
const ROUNDS = Number(process.argv[3] ?? 5);

const sdk = await loadSdk();
const emu = await startEmulator(["--rate-limit", "100000000"]);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One round: `CALLS` calls of each, alternating; returns [sdk calls/s, raw calls/s]. */
async function round(sdkCall, rawCall) {
  let sdkMs = 0;
  let rawMs = 0;
  for (let i = 0; i < CALLS; i++) {
    let t = performance.now();
    await rawCall();
    rawMs += performance.now() - t;
    t = performance.now();
    await sdkCall();
    sdkMs += performance.now() - t;
  }
  return [CALLS / (sdkMs / 1000), CALLS / (rawMs / 1000)];
}

try {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  const headers = { authorization: `Bearer ${KEY}`, accept: "application/json" };
  const raw = async (path) => {
    const r = await fetch(`${emu.baseUrl}${path}`, { headers });
    if (!r.ok) throw new Error(`raw fetch: ${r.status}`);
    return JSON.parse(await r.text());
  };
  const routes = [
    { name: "GET /v1/agents", sdk: () => client.agents.list(), raw: () => raw("/v1/agents") },
    {
      name: "GET /v1/agents/:id",
      sdk: () => client.agents.retrieve("agt_contract_review"),
      raw: () => raw("/v1/agents/agt_contract_review"),
    },
  ];
  const results = [];
  for (const route of routes) {
    for (let i = 0; i < 50; i++) {
      await route.sdk();
      await route.raw();
    }
    const sdkRates = [];
    const rawRates = [];
    for (let r = 0; r < ROUNDS; r++) {
      const [s, w] = await round(route.sdk, route.raw);
      sdkRates.push(s);
      rawRates.push(w);
    }
    const s = median(sdkRates);
    const w = median(rawRates);
    results.push({ route: route.name, sdk: s, raw: w });
    console.log(`${route.name}: sdk ${s.toFixed(0)} calls/s, raw fetch ${w.toFixed(0)} calls/s, sdk/raw ${(s / w).toFixed(3)}`);
  }
  const sdkAll = results.reduce((a, r) => a + r.sdk, 0) / results.length;
  const rawAll = results.reduce((a, r) => a + r.raw, 0) / results.length;
  const ratio = sdkAll / rawAll;
  console.log(
    JSON.stringify({
      bench: "client",
      routes: results.map((r) => ({ route: r.route, sdk_calls_per_s: Math.round(r.sdk), raw_calls_per_s: Math.round(r.raw) })),
      sdk_calls_per_s: Math.round(sdkAll),
      raw_calls_per_s: Math.round(rawAll),
      ratio: Number(ratio.toFixed(3)),
      overhead_pct: Number(((1 / ratio - 1) * 100).toFixed(1)),
    }),
  );
} finally {
  await emu.stop();
}
