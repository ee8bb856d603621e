// Where a call's wall time goes, next to a raw `fetch` of the same request, in one Node process against one local
// server (a diagnostic for issue 25's targets; `bench.mjs` gives the ratios BENCHMARKS.md shows). Each side's `fetch`
// is wrapped to note when it is called and when its response (the headers) arrives, which splits a call into:
//   - call -> fetch: the client's own work before the request leaves (for docauto: the wasm call that builds the
//     request, then `promise.js` up to `fetch`);
//   - fetch -> headers: the runtime's `fetch` and the server;
//   - headers -> done: reading the body, parsing it, and the promise layers back to the caller.
// Sides alternate call by call, their order rotating; the first two rounds warm up and are not counted.
// Several builds can be compared in one process: each argument after the shape is a wasm-bindgen output folder (its
// `docauto.js`, `.wasm` and snippets, as `DOCAUTO_GLUE_DIR` takes); with none, the built package (pkg/).
// Usage: node tests/js/client/phases.mjs get|post [glue dir...]   (env ROUNDS=12, CALLS=300 per round and side)
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { readWasmIn } from "../common.mjs";
import { loadSdk, KEY } from "./harness.mjs";

const shape = process.argv[2] ?? "get";
if (shape !== "get" && shape !== "post") throw new Error("usage: phases.mjs get|post [glue dir...]");
const dirs = process.argv.slice(3);
const ROUNDS = Number(process.env.ROUNDS ?? 12);
const CALLS = Number(process.env.CALLS ?? 300);

const SERVER = `
const { createServer } = require("node:http");
const run = JSON.stringify({ object: "extract_run", id: "exr_get", status: "processed", created_at: "2026-11-20T10:00:00.000Z", completed_at: "2026-11-20T10:00:04.250Z", metadata: { batch: "b-2026-11", source: "bench" }, usage: { pages: 3, credits: 3 } });
const send = (res, status, body) => {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-request-id": "req_phases" });
  res.end(body);
};
const server = createServer((req, res) => {
  if (req.method !== "POST") return send(res, 200, run);
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => send(res, 201, JSON.stringify({ object: "extract_config", id: "cfg_1", name: JSON.parse(Buffer.concat(chunks)).name })));
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log("port " + server.address().port));`;

const child = spawn(process.execPath, ["-e", SERVER], { stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise((done, fail) => {
  child.stdout.on("data", (d) => {
    const m = /port (\d+)/.exec(String(d));
    if (m) done(Number(m[1]));
  });
  child.on("exit", (code) => fail(new Error(`phases server exited ${code}`)));
});
const base = `http://127.0.0.1:${port}`;

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

/** A ~20 KB extraction schema (as bench.mjs's). */
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
const SCHEMA = schema20k();

async function sdkIn(dir) {
  if (dir === undefined) return loadSdk();
  const glue = await import(`${pathToFileURL(join(resolve(dir), "docauto.js")).href}?${encodeURIComponent(dir)}`);
  glue.initSync({ module: readWasmIn(resolve(dir)) });
  return glue;
}

const sides = {};
for (const dir of dirs.length ? dirs : [undefined]) {
  const sdk = await sdkIn(dir);
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
  child.kill();
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
