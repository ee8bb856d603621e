// The documentation site's budget: its size, and the time from opening a guide to the first Run's answer in
// Chromium, beside the time to the served playground's first panel in the same run (the same folder, the same
// server). The folder is what `cargo xtask site` writes (www/site/build.mjs from pkg/), served by a plain static
// server under /docauto/. Each visit is in a fresh browser context (no cache, no Service Worker, no storage).
//
// - a guide's first answer: the navigation's start to the first example of docs/client.html showing its answer
//   (its Run clicked as soon as the page's examples are ready; the client and emulator modules are fetched and
//   compiled on that first Run);
// - the playground's first panel: the navigation's start to its `body[data-ready]` (as tests/js/playground/bench.mjs
//   measures it).
//
// Run: `node tests/js/site/bench.mjs` (pkg/ built). Prints a Markdown table between `<!-- table -->` and
// `<!-- /table -->` (for `cargo xtask bench`), then a `BENCH {...}` JSON line.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { buildSite } from "../../../www/site/build.mjs";
import { serveStatic } from "../../../www/static.mjs";
import { launchChromium } from "../chromium.mjs";
import { filesUnder, kib, median } from "../common.mjs";

const RUNS = Number(process.env.SITE_BENCH_RUNS ?? 5);
const GUIDE = "docs/client.html";

/** Records, in the page, when the playground is ready and when the first example shows its answer. */
function watch() {
  new MutationObserver(() => {
    if (window.__readyAt === undefined && document.body?.dataset.ready === "true") window.__readyAt = performance.now();
    if (window.__answerAt === undefined && document.querySelector('[data-run="page"][data-state="done"]')) window.__answerAt = performance.now();
    if (window.__failedAt === undefined && document.querySelector('[data-run="page"][data-state="failed"]')) window.__failedAt = performance.now();
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-ready", "data-state"] });
}

const dir = mkdtempSync(join(tmpdir(), "docauto-site-bench-"));
let server;
let browser;
try {
  const site = join(dir, "site");
  const built = await buildSite({ out: site });
  const all = filesUnder(site).map((f) => {
    const bytes = readFileSync(f);
    return { path: relative(site, f), raw: bytes.byteLength, gzip: gzipSync(bytes, { level: 9 }).byteLength };
  });
  const sum = (list) => list.reduce((a, f) => ({ raw: a.raw + f.raw, gzip: a.gzip + f.gzip, n: a.n + 1 }), { raw: 0, gzip: 0, n: 0 });
  const part = (test) => sum(all.filter((f) => test(f.path)));
  const parts = {
    all: sum(all),
    playground: part((p) => p.startsWith("playground/")),
    pkg: part((p) => p.startsWith("pkg/")),
    assets: part((p) => p.startsWith("assets/")),
    pages: part((p) => p.endsWith(".html") && !p.startsWith("playground/")),
  };
  parts.other = { raw: parts.all.raw - parts.playground.raw - parts.pkg.raw - parts.assets.raw - parts.pages.raw, gzip: parts.all.gzip - parts.playground.gzip - parts.pkg.gzip - parts.assets.gzip - parts.pages.gzip, n: parts.all.n - parts.playground.n - parts.pkg.n - parts.assets.n - parts.pages.n };

  server = await serveStatic({ "/docauto/": site });
  const base = `${server.url}/docauto/`;
  browser = await launchChromium();

  const guide = [];
  const playground = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext();
    await context.addInitScript(watch);
    const page = await context.newPage();
    await page.goto(`${base}${GUIDE}`, { waitUntil: "commit" });
    await page.waitForFunction(() => document.documentElement.dataset.examples === "ready", null, { timeout: 60_000, polling: 10 });
    await page.click('[data-run="page"] button.run');
    await page.waitForFunction(() => window.__answerAt !== undefined || window.__failedAt !== undefined, null, { timeout: 60_000, polling: 10 });
    if (await page.evaluate(() => window.__failedAt !== undefined)) {
      throw new Error(`the first example failed: ${await page.evaluate(() => document.querySelector(".run-output").textContent)}`);
    }
    guide.push(await page.evaluate(() => window.__answerAt));
    await context.close();

    const other = await browser.newContext();
    await other.addInitScript(watch);
    const p2 = await other.newPage();
    await p2.goto(`${base}playground/`, { waitUntil: "commit" });
    await p2.waitForFunction(() => window.__readyAt !== undefined, null, { timeout: 60_000, polling: 10 });
    playground.push(await p2.evaluate(() => window.__readyAt));
    await other.close();
  }
  const [g, p] = [median(guide), median(playground)];
  const version = browser.version();
  const row = (label, x) => `| ${label} | ${x.n} | ${kib(x.raw)} | ${kib(x.gzip)} |`;
  console.log("<!-- table -->");
  console.log(`Measured by \`node tests/js/site/bench.mjs\` (Chromium ${version}, this machine): the folder \`cargo xtask site\` writes (${built.pages.length} pages, ${parts.all.n} files), served by a plain static server on 127.0.0.1 under \`/docauto/\`; each visit in a fresh browser context.

| the site | files | raw | gzip -9 (per file) |
| --- | --- | --- | --- |
${row("all", parts.all)}
${row("of which the playground (`playground/`)", parts.playground)}
${row("of which the package's browser files (`pkg/`: client, webhooks, realtime, testing, emulator)", parts.pkg)}
${row("of which the pages (HTML)", parts.pages)}
${row("of which the stylesheet, the runner, the TypeScript stripper and the Node stand-ins (`assets/`)", parts.assets)}
${row("of which the sample documents", parts.other)}

| time, median of ${RUNS} | ms | vs the playground's first panel |
| --- | --- | --- |
| opening a guide (\`${GUIDE}\`) to its first Run's answer (the Run clicked once the examples are ready: the client and emulator modules fetched and compiled, \`agents.list()\` answered) | ${g.toFixed(0)} | ${(g / p).toFixed(2)} |
| opening the playground to its first panel (\`data-ready\`: Service Worker installed, four modules compiled, emulator and backend started) | ${p.toFixed(0)} | 1.00 |`);
  console.log("<!-- /table -->");
  console.log(
    `BENCH ${JSON.stringify({
      bench: "site",
      chromium: version,
      pages: built.pages.length,
      files: parts.all.n,
      bytes: parts.all.raw,
      gzipBytes: parts.all.gzip,
      parts: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, { files: v.n, bytes: v.raw, gzipBytes: v.gzip }])),
      guideFirstAnswerMs: guide,
      playgroundFirstPanelMs: playground,
      medianGuideMs: Math.round(g),
      medianPlaygroundMs: Math.round(p),
      ratio: Number((g / p).toFixed(2)),
    })}`,
  );
} finally {
  await browser?.close().catch(() => {});
  await server?.close().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
