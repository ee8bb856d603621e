// cargo xtask bench: per entry of the package, the size of the wasm it loads (raw, gzip -9, brotli q11 from node's
// zlib) against its budget, and its cold start (import plus first call) in a fresh Node process and in workerd
// (miniflare); then the npm tarball (`npm pack --dry-run`). Prints a markdown report after the line `<!-- table -->`.
//
// Run: `node tests/js/size-bench.mjs` with pkg/ built (`cargo xtask build`). Budgets are gzip -9 of the wasm an entry
// loads in a browser, each with its stretch goal. A budget over its limit is printed as FAIL; the
// script still exits 0 so the other benchmarks run (the budgets are reported, not enforced, here).
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { workerdOnce } from "./workerd-once.mjs";
import { TestSigner } from "docauto/testing";
import { bundle } from "./bundle.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const work = root + "target/docauto-js/size-bench/";
const NOW = 1_790_000_000;
const NODE_RUNS = 7;
const WORKERD_RUNS = 5;

/** One entry: its folder under pkg/, its module, its budget and stretch goal (KiB of gzip -9) and its first call. */
function entries(input) {
  const { jwks, body, signature } = input;
  const verify = `const e = await new m.WebhookVerifier({ jwks: ${JSON.stringify(jwks)}, now: ${NOW} })
      .verify(${JSON.stringify(body)}, ${JSON.stringify(signature)});
    return e.processingId;`;
  return [
    {
      name: "docauto",
      dir: "",
      module: "docauto-client.wasm",
      budgetKiB: 110,
      stretchKiB: 80,
      call: "`new DocAuto`",
      first: `new m.DocAuto({ apiKey: "sk_test_size_bench", baseUrl: "https://api.example" }); return "agr_size_bench";`,
    },
    // Its second module, p256 for the checks no host crypto answers, is loaded only then (a row of its own, without
    // a budget).
    {
      name: "docauto/webhooks",
      dir: "webhooks/",
      module: "docauto-webhooks.wasm",
      companion: "docauto-webhooks-p256.wasm",
      budgetKiB: 50,
      stretchKiB: 40,
      call: "`verify`",
      first: verify,
    },
    {
      name: "docauto/realtime",
      dir: "realtime/",
      module: "docauto-realtime.wasm",
      budgetKiB: 80,
      stretchKiB: 40,
      call: "`new RealtimeTranscriber`",
      first: `new m.RealtimeTranscriber({ url: "wss://realtime.example/v1/realtime/sessions/rts_1?ticket=t",
      WebSocket: class {} }); return "agr_size_bench";`,
    },
    {
      name: "docauto/testing",
      dir: "testing/",
      module: "docauto-testing.wasm",
      budgetKiB: 80,
      stretchKiB: null,
      call: "`TestSigner.generate` + `sign`",
      first: `const s = await m.TestSigner.generate({ now: ${NOW} });
    const { body } = await s.sign({ type: "agent_run.completed", processingId: "agr_size_bench", data: {} });
    return JSON.parse(body).processingId;`,
    },
  ];
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function sizes(path) {
  const bytes = readFileSync(path);
  return {
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

/** Import + first call in fresh Node processes (median of NODE_RUNS). */
function coldNode(entry, slug, expected) {
  const file = `${work}cold-${slug}.mjs`;
  writeFileSync(
    file,
    `const t0 = performance.now();
const m = await import("${entry.name}");
const t1 = performance.now();
const got = await (async () => { ${entry.first} })();
const t2 = performance.now();
if (got !== ${JSON.stringify(expected)}) throw new Error("first call returned " + got);
console.log(JSON.stringify({ importMs: t1 - t0, firstMs: t2 - t1 }));
`,
  );
  const runs = Array.from({ length: NODE_RUNS }, () =>
    JSON.parse(execFileSync("node", [file], { cwd: root, timeout: 60_000, stdio: ["ignore", "pipe", "inherit"] }).toString()));
  const importMs = median(runs.map((r) => r.importMs));
  const firstMs = median(runs.map((r) => r.firstMs));
  const totalMs = median(runs.map((r) => r.importMs + r.firstMs));
  return { importMs, firstMs, totalMs };
}

/** The entry bundled for workerd (its "workerd" condition, its .wasm as a CompiledWasm module). */
async function workerScript(entry, slug) {
  const dir = `${work}worker-${slug}/`;
  mkdirSync(dir + "wasm", { recursive: true });
  writeFileSync(
    dir + "entry.mjs",
    `import * as m from "${entry.name}";
export default { async fetch() { return new Response(await (async () => { ${entry.first} })()); } };
`,
  );
  const { code } = await bundle(dir + "entry.mjs", {
    conditions: ["workerd", "worker", "browser"],
    format: "esm",
    external: ["*.wasm"],
  });
  writeFileSync(dir + "worker.mjs", code);
  // Every module of the entry (docauto/webhooks has a second one, its P-256 check).
  for (const m of readdirSync(`${root}pkg/${entry.dir}wasm`).filter((f) => f.endsWith(".wasm"))) {
    copyFileSync(`${root}pkg/${entry.dir}wasm/${m}`, dir + "wasm/" + m);
  }
  return dir + "worker.mjs";
}

function npmPack() {
  // npm's warnings (stderr) stay out of the report.
  const out = execFileSync("npm", ["pack", "--dry-run", "--json"], {
    cwd: root + "pkg", timeout: 120_000, stdio: ["ignore", "pipe", "pipe"],
  });
  const [info] = JSON.parse(out.toString());
  return { size: info.size, unpacked: info.unpackedSize, files: info.entryCount };
}

const fmt = (n) => Math.round(n).toLocaleString("en-US").replace(/,/g, " ");
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

function budgetCell(gzip, budgetKiB, stretchKiB) {
  const limit = budgetKiB * 1024;
  if (gzip >= limit) return `FAIL: ${kib(gzip - limit)} over ${budgetKiB} KiB`;
  let stretch = "";
  if (stretchKiB !== null) stretch = gzip < stretchKiB * 1024 ? `, stretch ${stretchKiB} KiB met` : `, stretch ${stretchKiB} KiB not met`;
  return `pass (< ${budgetKiB} KiB${stretch})`;
}

async function main() {
  mkdirSync(work, { recursive: true });
  const signer = await TestSigner.generate({ now: NOW });
  const signed = await signer.sign({ type: "agent_run.completed", processingId: "agr_size_bench", data: {} });
  const list = entries({ jwks: signer.jwks, body: signed.body, signature: signed.signature });
  const expected = "agr_size_bench";

  // The same worker without the package: what workerd's own start and first request cost.
  const baseline = `${work}worker-baseline/worker.mjs`;
  mkdirSync(`${work}worker-baseline`, { recursive: true });
  writeFileSync(baseline, `export default { async fetch() { return new Response(${JSON.stringify(expected)}); } };\n`);

  const rows = [];
  let pass = 0;
  let fail = 0;
  for (const entry of list) {
    const slug = entry.dir.replace(/\/$/, "") || "root";
    const z = sizes(`${root}pkg/${entry.dir}wasm/${entry.module}`);
    const node = coldNode(entry, slug, expected);
    const script = await workerScript(entry, slug);
    // Each start of the entry's worker follows a start of the baseline, so both see the same machine load.
    const wd = [];
    const base = [];
    for (let i = 0; i < WORKERD_RUNS; i++) {
      base.push((await workerdOnce(baseline, expected)).ms);
      wd.push((await workerdOnce(script, expected)).ms);
    }
    if (z.gzip < entry.budgetKiB * 1024) pass++;
    else fail++;
    rows.push({ entry, z, node, workerdMs: median(wd), baseMs: median(base) });
    if (entry.companion) rows.push({ entry, z: sizes(`${root}pkg/${entry.dir}wasm/${entry.companion}`), companion: true });
  }
  const pack = npmPack();

  const lines = [
    `Measured by \`cargo xtask bench\` (\`node tests/js/size-bench.mjs\`, Node ${process.version}): the \`.wasm\` each entry loads ` +
      "(gzip -9 and brotli q11 from node's zlib); each entry's budget is the most its module may weigh gzip -9, with a stretch goal below it.",
    "",
    "| entry | raw | gzip -9 | brotli q11 | budget (gzip -9) |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map(({ entry, z, companion }) => companion
      ? `| \`${entry.name}\`: \`${entry.companion}\` (P-256, loaded on the first check no host crypto answers) | ${fmt(z.raw)} B | ${fmt(z.gzip)} B (${kib(z.gzip)}) | ${fmt(z.brotli)} B (${kib(z.brotli)}) | |`
      : `| \`${entry.name}\` | ${fmt(z.raw)} B | ${fmt(z.gzip)} B (${kib(z.gzip)}) | ${fmt(z.brotli)} B (${kib(z.brotli)}) | ${budgetCell(z.gzip, entry.budgetKiB, entry.stretchKiB)} |`),
    "",
    `Cold start, import plus first call: a fresh Node process (median of ${NODE_RUNS}); workerd via miniflare, start plus ` +
      `first request (median of ${WORKERD_RUNS}), and in parentheses the same minus a worker without the package started ` +
      "just before each run. " +
      "Absolute numbers move with machine load; compare within one run.",
    "",
    "| entry | first call | Node import | Node first call | Node total | workerd start + first request |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.filter((r) => !r.companion).map(({ entry, node, workerdMs, baseMs }) =>
      `| \`${entry.name}\` | ${entry.call} | ${node.importMs.toFixed(1)} ms | ${node.firstMs.toFixed(1)} ms | ${node.totalMs.toFixed(1)} ms | ${fmt(workerdMs)} ms (${workerdMs >= baseMs ? "+" : ""}${fmt(workerdMs - baseMs)}) |`),
    "",
    `npm tarball (\`npm pack --dry-run\` of pkg/): ${fmt(pack.size)} B packed (${kib(pack.size)}), ${fmt(pack.unpacked)} B unpacked, ${pack.files} files.`,
  ];
  console.log(`size budgets: ${pass} passed, ${fail} failed`);
  console.log("<!-- table -->");
  console.log(lines.join("\n"));
}

await main();
