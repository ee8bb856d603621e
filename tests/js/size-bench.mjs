// cargo xtask bench: per entry of the package, what it adds to a bundle: the wasm it loads (raw, gzip -9, brotli
// q11 from node's zlib) and its JS (the entry bundled and minified by esbuild for browsers, gzip -9), with jose's
// verifier functions bundled the same way beside `docauto/webhooks`; its cold start (import plus first call) in a
// fresh Node process and in workerd (miniflare); then the npm tarball (`npm pack --dry-run`). Prints a `BENCH {...}`
// line, then a markdown report between `<!-- table -->` and `<!-- /table -->`.
//
// Run: `node tests/js/size-bench.mjs` with pkg/ built (`cargo xtask build`). The size budgets are `cargo xtask
// bench`'s (xtask/src/bench.rs), which reads the BENCH line and writes their verdicts into PERFORMANCE.md.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { workerdOnce } from "./workerd-once.mjs";
import { TestSigner } from "docauto/testing";
import { build } from "esbuild";
import { bundle } from "./bundle.mjs";
import { kib, median } from "./common.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const work = root + "target/docauto-js/size-bench/";
const NOW = 1_790_000_000;
const NODE_RUNS = 7;
const WORKERD_RUNS = 5;

/** One entry: its folder under pkg/, its module and its first call. */
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
      call: "`new DocAuto`",
      first: `new m.DocAuto({ apiKey: "sk_test_size_bench", baseUrl: "https://api.example" }); return "agr_size_bench";`,
    },
    // Its second module, p256 for the checks no host crypto answers, is loaded only then (a row of its own).
    {
      name: "docauto/webhooks",
      dir: "webhooks/",
      module: "docauto-webhooks.wasm",
      companion: "docauto-webhooks-p256.wasm",
      call: "`verify`",
      first: verify,
    },
    {
      name: "docauto/realtime",
      dir: "realtime/",
      module: "docauto-realtime.wasm",
      call: "`new RealtimeTranscriber`",
      first: `new m.RealtimeTranscriber({ url: "wss://realtime.example/v1/realtime/sessions/rts_1?ticket=t",
      WebSocket: class {} }); return "agr_size_bench";`,
    },
    {
      name: "docauto/testing",
      dir: "testing/",
      module: "docauto-testing.wasm",
      call: "`TestSigner.generate` + `sign`",
      first: `const s = await m.TestSigner.generate({ now: ${NOW} });
    const { body } = await s.sign({ type: "agent_run.completed", processingId: "agr_size_bench", data: {} });
    return JSON.parse(body).processingId;`,
    },
  ];
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

/** `source` bundled and minified by esbuild for browsers (its `.wasm` left out): raw and gzip -9 bytes. */
async function minified(source) {
  const res = await build({
    stdin: { contents: source, resolveDir: root, loader: "js" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    minify: true,
    external: ["*.wasm"],
    logLevel: "warning",
    target: "es2022",
  });
  const code = res.outputFiles[0].contents;
  return { raw: code.length, gzip: gzipSync(code, { level: 9 }).length };
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
  for (const entry of list) {
    const slug = entry.dir.replace(/\/$/, "") || "root";
    const z = sizes(`${root}pkg/${entry.dir}wasm/${entry.module}`);
    const js = await minified(`export * from "${entry.name}";`);
    const node = coldNode(entry, slug, expected);
    const script = await workerScript(entry, slug);
    // Each start of the entry's worker follows a start of the baseline, so both see the same machine load.
    const wd = [];
    const base = [];
    for (let i = 0; i < WORKERD_RUNS; i++) {
      base.push((await workerdOnce(baseline, expected)).ms);
      wd.push((await workerdOnce(script, expected)).ms);
    }
    const companion = entry.companion ? sizes(`${root}pkg/${entry.dir}wasm/${entry.companion}`) : null;
    rows.push({ entry, z, js, companion, node, workerdMs: median(wd), baseMs: median(base) });
  }
  // What a webhook endpoint would bundle instead: jose's verification functions (the local and the remote key set).
  const joseVersion = JSON.parse(readFileSync(`${root}node_modules/jose/package.json`, "utf8")).version;
  const jose = await minified('export { jwtVerify, createLocalJWKSet, createRemoteJWKSet } from "jose";');
  const pack = npmPack();

  const size = (z) => `${fmt(z.gzip)} B (${kib(z.gzip)})`;
  const lines = [
    `\`node tests/js/size-bench.mjs\`: Node ${process.version}; gzip -9 and brotli q11 from node's zlib; the JS is the entry bundled and minified by esbuild for browsers (\`export *\` of the entry, its \`.wasm\` left out).`,
    "",
    "| entry | wasm raw | wasm gzip -9 | wasm brotli q11 | JS gzip -9 |",
    "| --- | --- | --- | --- | --- |",
    ...rows.flatMap(({ entry, z, js, companion }) => [
      `| \`${entry.name}\` | ${fmt(z.raw)} B | ${size(z)} | ${fmt(z.brotli)} B (${kib(z.brotli)}) | ${size(js)} |`,
      ...(companion
        ? [`| \`${entry.name}\`: \`${entry.companion}\` (P-256, loaded on the first check no host crypto answers) | ${fmt(companion.raw)} B | ${size(companion)} | ${fmt(companion.brotli)} B (${kib(companion.brotli)}) | |`]
        : []),
    ]),
    `| jose ${joseVersion}: \`jwtVerify\`, \`createLocalJWKSet\`, \`createRemoteJWKSet\` | | | | ${size(jose)} |`,
    "",
    `Cold start, import plus first call: a fresh Node process (median of ${NODE_RUNS}); workerd via miniflare, start plus ` +
      `first request (median of ${WORKERD_RUNS}), and in parentheses the same minus a worker without the package started ` +
      "just before each run.",
    "",
    "| entry | first call | Node import | Node first call | Node total | workerd start + first request |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(({ entry, node, workerdMs, baseMs }) =>
      `| \`${entry.name}\` | ${entry.call} | ${node.importMs.toFixed(1)} ms | ${node.firstMs.toFixed(1)} ms | ${node.totalMs.toFixed(1)} ms | ${fmt(workerdMs)} ms (${workerdMs >= baseMs ? "+" : ""}${fmt(workerdMs - baseMs)}) |`),
    "",
    `npm tarball (\`npm pack --dry-run\` of pkg/): ${fmt(pack.size)} B packed (${kib(pack.size)}), ${fmt(pack.unpacked)} B unpacked, ${pack.files} files.`,
  ];
  const bench = {
    bench: "size",
    entries: rows.map(({ entry, z, js, companion, node, workerdMs, baseMs }) => ({
      name: entry.name,
      module: entry.module,
      wasm: z,
      js,
      ...(companion ? { companion: { module: entry.companion, ...companion } } : {}),
      node,
      workerdMs,
      workerdBareMs: baseMs,
    })),
    jose: { version: joseVersion, js: jose },
    pack,
  };
  console.log(`BENCH ${JSON.stringify(bench)}`);
  console.log("<!-- table -->");
  console.log(lines.join("\n"));
  console.log("<!-- /table -->");
}

await main();
