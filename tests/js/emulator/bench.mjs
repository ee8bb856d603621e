// cargo xtask bench: docauto/emulator (the wasm build) beside the native binary, in one run, in Node: the module's
// size; cold start (a fresh process until the first answer); request latency (GET /v1/agents, sequential) and
// agent-run creations per second (POST /v1/agent-runs?wait=0, 16 in flight), in-process through createEmulator's
// fetch, and over loopback HTTP for the native binary and `npx docauto-emulator` (the same Node fetch as client).
// Prints a `BENCH {...}` line, then a markdown report between `<!-- table -->` and `<!-- /table -->`.
// The module's size budget is `cargo xtask bench`'s (xtask/src/bench.rs), which writes its verdict into PERFORMANCE.md.
//
// Run: `node tests/js/emulator/bench.mjs` with pkg/ built and target/release/docauto-emulator (or DOCAUTO_EMULATOR).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { createEmulator } from "docauto/emulator";
import { startCommand } from "./command.mjs";
import { kib, median } from "../common.mjs";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const NATIVE = process.env.DOCAUTO_EMULATOR ?? `${root}target/release/docauto-emulator`;
const BIN = `${root}pkg/emulator/bin.js`;
const KEY = "sk_test_docauto";
const COLD_RUNS = 7;
const GETS = 3000;
const CREATIONS = 3000;
const IN_FLIGHT = 16;
const FLAGS = ["--rate-limit", "1000000000", "--time-scale", "0.01"];

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const us = (ms) => `${Math.round(ms * 1000)} us`;

/** A fresh process until its first answer: the command, then one GET over HTTP from this process. */
async function coldCommand(cmd, args) {
  const t0 = performance.now();
  const s = await startCommand(cmd, [...args, ...FLAGS]);
  const r = await fetch(`${s.url}/v1/agents`, { headers: { authorization: `Bearer ${KEY}` } });
  await r.arrayBuffer();
  const total = performance.now() - t0;
  await s.stop();
  return total;
}

/** A fresh Node process importing docauto/emulator, creating one and answering one request in-process. */
async function coldInProcess() {
  const code = `const t0 = performance.now();
const { createEmulator } = await import("docauto/emulator");
const t1 = performance.now();
const emu = createEmulator();
const t2 = performance.now();
await (await emu.fetch("http://emulator.test/v1/agents", { headers: { authorization: "Bearer ${KEY}" } })).arrayBuffer();
const t3 = performance.now();
await emu.close();
console.log(JSON.stringify({ imp: t1 - t0, create: t2 - t1, first: t3 - t2 }));`;
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  await new Promise((r) => child.once("exit", r));
  return { process: performance.now() - t0, ...JSON.parse(out) };
}

async function latency(doFetch, base) {
  const times = [];
  const init = { headers: { authorization: `Bearer ${KEY}` } };
  for (let i = 0; i < GETS + 300; i++) {
    const t0 = performance.now();
    await (await doFetch(`${base}/v1/agents`, init)).arrayBuffer();
    if (i >= 300) times.push(performance.now() - t0);
  }
  return { p50: median(times), p99: pct(times, 0.99) };
}

async function creations(doFetch, base) {
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const up = await (await doFetch(`${base}/v1/files`, { method: "POST", headers, body: JSON.stringify({ name: "a.txt", mimeType: "text/plain" }) })).json();
  await (await doFetch(up.uploadUrl, { method: "PUT", headers: { "content-type": "text/plain" }, body: "Invoice Number: 1\n" })).arrayBuffer();
  for (let i = 0; i < 200; i++) {
    const f = await (await doFetch(`${base}/v1/files/${up.id}`, { headers })).json();
    if (f.status === "ready") break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const body = JSON.stringify({ agent: "agt_document_digest", files: [{ id: up.id }] });
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next++ < CREATIONS) {
      const r = await doFetch(`${base}/v1/agent-runs?wait=0`, { method: "POST", headers, body });
      await r.arrayBuffer();
      if (r.status !== 200 && r.status !== 202) failed++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const secs = (performance.now() - t0) / 1000;
  if (failed) throw new Error(`${failed} creations failed`);
  return CREATIONS / secs;
}

// size
const wasm = readFileSync(`${root}pkg/emulator/wasm/docauto-emulator.wasm`);
const gz = gzipSync(wasm, { level: 9 }).length;
const br = brotliCompressSync(wasm, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

// cold starts, interleaved so that machine load hits each alike
const cold = { native: [], bin: [], inProcess: [] };
for (let i = 0; i < COLD_RUNS; i++) {
  cold.native.push(await coldCommand(NATIVE, []));
  cold.bin.push(await coldCommand(process.execPath, [BIN]));
  cold.inProcess.push(await coldInProcess());
}
const inproc = (k) => median(cold.inProcess.map((c) => c[k]));

// warm: latency and creations, each build in turn
const native = await startCommand(NATIVE, FLAGS);
const bin = await startCommand(process.execPath, [BIN, ...FLAGS]);
const emu = createEmulator({ rateLimit: 1_000_000_000, timeScale: 0.01 });
const lat = {
  inProcess: await latency(emu.fetch, emu.url),
  native: await latency(fetch, native.url),
  bin: await latency(fetch, bin.url),
};
const rate = {
  inProcess: await creations(emu.fetch, emu.url),
  native: await creations(fetch, native.url),
  bin: await creations(fetch, bin.url),
};
await emu.close();
await native.stop();
await bin.stop();

const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
console.log(`BENCH ${JSON.stringify({
  bench: "emulator",
  wasm: { raw: wasm.length, gzip: gz, brotli: br },
  coldMs: { inProcess: inproc("process"), bin: median(cold.bin), native: median(cold.native) },
  p50Ms: { inProcess: lat.inProcess.p50, bin: lat.bin.p50, native: lat.native.p50 },
  p99Ms: { inProcess: lat.inProcess.p99, bin: lat.bin.p99, native: lat.native.p99 },
  creationsPerSecond: { inProcess: rate.inProcess, bin: rate.bin, native: rate.native },
})}`);
console.log("<!-- table -->");
console.log(`\`node tests/js/emulator/bench.mjs\`: Node ${process.version}; \`docauto/emulator\` (the emulator's wasm build) beside the native binary (\`target/release/docauto-emulator\`) in the same run. Over HTTP the client is this process's \`fetch\` for both; in-process is \`createEmulator().fetch\` (no socket).

| module | raw | gzip -9 | brotli q11 |
| --- | --- | --- | --- |
| \`emulator/wasm/docauto-emulator.wasm\` | ${wasm.length} B | ${gz} B (${kib(gz)}) | ${br} B (${kib(br)}) |

| | in-process (\`createEmulator\`) | \`npx docauto-emulator\` (wasm, HTTP) | native binary (HTTP) |
| --- | --- | --- | --- |
| cold start: a fresh process to its first answer (median of ${COLD_RUNS}) | ${inproc("process").toFixed(0)} ms (import ${inproc("imp").toFixed(1)} ms, \`createEmulator\` ${inproc("create").toFixed(1)} ms, first request ${inproc("first").toFixed(1)} ms) | ${median(cold.bin).toFixed(0)} ms | ${median(cold.native).toFixed(0)} ms |
| \`GET /v1/agents\`, sequential, p50 / p99 (${GETS}) | ${us(lat.inProcess.p50)} / ${us(lat.inProcess.p99)} | ${us(lat.bin.p50)} / ${us(lat.bin.p99)} | ${us(lat.native.p50)} / ${us(lat.native.p99)} |
| agent-run creations per second (${CREATIONS}, ${IN_FLIGHT} in flight) | ${rate.inProcess.toFixed(0)} | ${rate.bin.toFixed(0)} | ${rate.native.toFixed(0)} |

Ratios to the native binary: p50 latency in-process ${ratio(lat.inProcess.p50, lat.native.p50)}, wasm over HTTP ${ratio(lat.bin.p50, lat.native.p50)}; creations in-process ${ratio(rate.inProcess, rate.native)}, wasm over HTTP ${ratio(rate.bin, rate.native)}.`);
console.log("<!-- /table -->");
