// The static playground's size and its time to the first panel in Chromium, beside the served demo in the same run
// (`cargo xtask bench` writes the table into BENCHMARKS.md). Prints a `BENCH {...}` line, then the report between
// `<!-- table -->` and `<!-- /table -->`. The folder is what `cargo xtask playground` writes
// (www/playground/build.mjs from pkg/); it is served by a plain static server under /docauto/. The time is from the
// navigation's start to the page's `data-ready` (main.js sets it once every panel is built), read in the page by a
// MutationObserver installed before any script of the page runs.
//
// Run: `node tests/js/playground/bench.mjs` (pkg/ built; the served demo's emulator from DOCAUTO_EMULATOR, default
// target/debug/docauto-emulator).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { buildPlayground } from "../../../www/playground/build.mjs";
import { startDemo } from "../../../www/dev.mjs";
import { serveStatic } from "../../../www/static.mjs";
import { CHROMIUM_ARGS } from "../chromium.mjs";
import { ROOT } from "../realtime/harness.mjs";
import { filesUnder, kib, median } from "../common.mjs";

const RUNS = 5;

/** Records, in the page, the time from navigation start to `body[data-ready]`. */
function watchReady() {
  new MutationObserver((_, observer) => {
    if (document.body?.dataset.ready === "true" && window.__readyAt === undefined) {
      window.__readyAt = performance.now();
      observer.disconnect();
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-ready"] });
}

async function timeToReady(page, navigate) {
  await navigate();
  await page.waitForFunction(() => window.__readyAt !== undefined, null, { timeout: 60_000, polling: 20 });
  return page.evaluate(() => window.__readyAt);
}

const dir = mkdtempSync(join(tmpdir(), "docauto-playground-bench-"));
let server;
let demo;
let browser;
try {
  const site = join(dir, "site");
  const built = await buildPlayground({ out: site, pkg: join(ROOT, "pkg") });
  const all = filesUnder(site).map((f) => {
    const bytes = readFileSync(f);
    return { path: relative(site, f), raw: bytes.byteLength, gzip: gzipSync(bytes, { level: 9 }).byteLength };
  });
  const sum = (list) => list.reduce((a, f) => ({ raw: a.raw + f.raw, gzip: a.gzip + f.gzip }), { raw: 0, gzip: 0 });
  const emulatorWasm = all.filter((f) => f.path === "pkg/emulator/wasm/docauto-emulator.wasm");
  const otherWasm = all.filter((f) => f.path.endsWith(".wasm") && !emulatorWasm.includes(f));
  const rest = all.filter((f) => !f.path.endsWith(".wasm"));

  server = await serveStatic({ "/docauto/": site });
  const url = `${server.url}/docauto/`;
  demo = await startDemo({ port: 0, env: {} });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });

  const first = [];
  const reload = [];
  const served = [];
  for (let i = 0; i < RUNS; i++) {
    // a fresh context each time: no Service Worker, no storage, no cache
    const context = await browser.newContext();
    await context.addInitScript(watchReady);
    const page = await context.newPage();
    first.push(await timeToReady(page, () => page.goto(url, { waitUntil: "commit" })));
    reload.push(await timeToReady(page, () => page.reload({ waitUntil: "commit" })));
    await context.close();
    const other = await browser.newContext();
    await other.addInitScript(watchReady);
    const p2 = await other.newPage();
    served.push(await timeToReady(p2, () => p2.goto(`${demo.url}/`, { waitUntil: "commit" })));
    await other.close();
  }
  const [f, r, s] = [median(first), median(reload), median(served)];
  const version = browser.version();
  console.log(`BENCH ${JSON.stringify({ bench: "playground", files: built.files, first, reload, served })}`);
  console.log("<!-- table -->");
  console.log(`\`node tests/js/playground/bench.mjs\`: Chromium ${version}; the folder \`cargo xtask playground\` writes (${built.files} files), served by a plain static server on 127.0.0.1 under \`/docauto/\`, beside the served demo (\`cargo xtask demo\`: the Node backend and the native emulator on loopback) in the same run.

| the folder | raw | gzip -9 (per file) |
| --- | --- | --- |
| all ${built.files} files | ${kib(sum(all).raw)} | ${kib(sum(all).gzip)} |
| of which the emulator's module (\`pkg/emulator/wasm/docauto-emulator.wasm\`) | ${kib(sum(emulatorWasm).raw)} | ${kib(sum(emulatorWasm).gzip)} |
| of which the client, webhooks and realtime modules | ${kib(sum(otherWasm).raw)} | ${kib(sum(otherWasm).gzip)} |
| of which JS, HTML, CSS and the sample documents | ${kib(sum(rest).raw)} | ${kib(sum(rest).gzip)} |

| time to the first panel (navigation start to the page's \`data-ready\`), median of ${RUNS} | ms | vs the served demo |
| --- | --- | --- |
| playground, first visit (fresh profile: the Service Worker installed, four modules fetched and compiled, emulator and backend started) | ${f.toFixed(0)} | ${(f / s).toFixed(2)} |
| playground, reload (the worker active, the state restored from storage) | ${r.toFixed(0)} | ${(r / s).toFixed(2)} |
| served demo, first visit (fresh profile; backend and emulator already running) | ${s.toFixed(0)} | 1.00 |`);
  console.log("<!-- /table -->");
} finally {
  await browser?.close().catch(() => {});
  await demo?.stop().catch(() => {});
  await server?.close().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
