// Where a call's wall time goes, next to a raw `fetch` of the same request, in one Node process against one local
// server (a diagnostic for the client's targets in PERFORMANCE.md; `bench.mjs` gives the ratios BENCHMARKS.md
// shows). Each side's `fetch` is wrapped to note when it is called and when its response (the headers) arrives,
// which splits a call into:
//   - call -> fetch: the client's own work before the request leaves (for docauto: the wasm call that builds the
//     request, then `promise.js` up to `fetch`);
//   - fetch -> headers: the runtime's `fetch` and the server;
//   - headers -> done: reading the body, parsing it, and the promise layers back to the caller.
// Sides alternate call by call, their order rotating; the first two rounds warm up and are not counted.
// Several builds can be compared in one process: each argument after the shape is a wasm-bindgen output folder (its
// `docauto.js`, `.wasm` and snippets, as `DOCAUTO_GLUE_DIR` takes); with none, the built package (pkg/).
// Usage: node tests/js/client/phases.mjs get|post [glue dir...]   (env ROUNDS=12, CALLS=300 per round and side)
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { loadSdk, KEY } from "./harness.mjs";
import { schema20k, startBenchServer } from "./bench-server.mjs";

const shape = process.argv[2] ?? "get";
if (shape !== "get" && shape !== "post") throw new Error("usage: phases.mjs get|post [glue dir...]");
const dirs = process.argv.slice(3);
const ROUNDS = Number(process.env.ROUNDS ?? 12);
const CALLS = Number(process.env.CALLS ?? 300);

// bench.mjs's server (its list route is not asked here: one page of one run).
const server = await startBenchServer(1, 1);
const base = server.url;

// When the current call's fetch was called, and when its response arrived.
let fetchedAt = 0;
let headersAt = 0;
const timedFetch = (url, init) => {
  fetchedAt = performance.now();
  return fetch(url, init).then((response) => {
    headersAt = performance.now();
    return response;
  });
};

const SCHEMA = schema20k();

const sides = {};
for (const dir of dirs.length ? dirs : [undefined]) {
  const sdk = await loadSdk(dir && resolve(dir));
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: base, logLevel: "off", fetch: timedFetch });
  sides[dir ?? "docauto"] =
    shape === "post" ? () => client.configs.create("extract", { name: "phases", config: { schema: SCHEMA } }) : () => client.runs.retrieve("exr_get");
}
const headers = { authorization: `Bearer ${KEY}`, accept: "application/json" };
sides["raw fetch"] =
  shape === "post"
    ? async () => {
        const init = {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", "idempotency-key": randomUUID() },
          body: JSON.stringify({ name: "phases", config: { schema: SCHEMA } }),
        };
        return (await timedFetch(`${base}/v1/extract/configs`, init)).json();
      }
    : async () => (await timedFetch(`${base}/v1/runs/exr_get`, { headers })).json();

const names = Object.keys(sides);
const sums = Object.fromEntries(names.map((n) => [n, { pre: 0, wire: 0, post: 0, calls: 0 }]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < CALLS; i++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length];
        const start = performance.now();
        await sides[name]();
        const end = performance.now();
        if (round < 2) continue;
        const s = sums[name];
        s.pre += fetchedAt - start;
        s.wire += headersAt - fetchedAt;
        s.post += end - headersAt;
        s.calls += 1;
      }
    }
  }
} finally {
  server.stop();
}
const us = (ms, n) => ((ms * 1000) / n).toFixed(1).padStart(7);
const rawTotal = (sums["raw fetch"].pre + sums["raw fetch"].wire + sums["raw fetch"].post) / sums["raw fetch"].calls;
console.log(`${shape.toUpperCase()}, us per call over ${ROUNDS - 2} rounds of ${CALLS} calls per side`);
console.log(`${"side".padEnd(24)}call->fetch fetch->headers headers->done   total  / raw`);
for (const name of names) {
  const s = sums[name];
  const total = (s.pre + s.wire + s.post) / s.calls;
  console.log(
    `${name.slice(-24).padEnd(24)}${us(s.pre, s.calls)}    ${us(s.wire, s.calls)}        ${us(s.post, s.calls)} ${us(total, 1)}  ${(total / rawTotal).toFixed(3)}`,
  );
}
