// The static playground end to end in a browser: `cargo xtask playground`'s folder (written here by
// www/playground/build.mjs from pkg/) served by a plain static file server under a sub-path (/docauto/), opened in
// headless Chromium (playwright-core; its fake microphone plays an espeak-ng WAV) or, with `--browser firefox`, in
// Debian's firefox-esr (puppeteer-core over WebDriver BiDi; its fake microphone plays a tone, PulseAudio gives it an
// audio output). The checks run inside the page (checks.js: plain DOM), so another driver can run them unchanged:
// each panel, a delivery verified in the inspector, live transcription showing text, a reload keeping the run, the
// reset button, no request off the page's origin, no page error.
//
// Run: `node tests/js/playground/e2e.mjs [--browser firefox]` (needs pkg/ from `cargo xtask build`). Prints
// `N passed, N failed`; exits non-zero on a failure.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { chromium } from "playwright-core";
import { buildPlayground } from "../../../www/playground/build.mjs";
import { serveStatic } from "../../../www/static.mjs";
import { CHROMIUM_ARGS } from "../chromium.mjs";
import { launchFirefox } from "../firefox.mjs";
import { ROOT, speechWav } from "../realtime/harness.mjs";
import { report } from "../common.mjs";

const FIREFOX = process.argv.includes("--browser") && process.argv[process.argv.indexOf("--browser") + 1] === "firefox";
const SUITE = `playground e2e (${FIREFOX ? "firefox" : "chromium"})`;
const LIMIT_MS = 240_000;
const tally = { passed: 0, failed: 0 };
const log = (line) => {
  console.log(line);
  if (line.startsWith("ok  ")) tally.passed++;
  else if (line.startsWith("FAIL")) tally.failed++;
};

let browser;
let server;
let rootServer;
let dir;
let wav;
const watchdog = setTimeout(() => {
  log(`FAIL the whole file took more than ${LIMIT_MS / 1000} s`);
  finish();
}, LIMIT_MS);

async function finish() {
  clearTimeout(watchdog);
  await browser?.close().catch(() => {});
  await server?.close().catch(() => {});
  await rootServer?.close().catch(() => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (wav) rmSync(dirname(wav), { recursive: true, force: true });
  report(SUITE, tally);
  console.log(`${tally.passed} passed, ${tally.failed} failed`);
  process.exit(tally.failed === 0 ? 0 : 1);
}

async function launch() {
  if (FIREFOX) return launchFirefox({ audio: true });
  wav = speechWav();
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    timeout: 60_000,
    args: [
      ...CHROMIUM_ARGS,
      "--use-fake-device-for-media-stream",
      "--use-fake-ui-for-media-stream",
      `--use-file-for-fake-audio-capture=${wav}`,
      "--autoplay-policy=no-user-gesture-required",
    ],
  });
}

async function main() {
  dir = mkdtempSync(join(tmpdir(), "docauto-playground-"));
  const site = join(dir, "site");
  const built = await buildPlayground({ out: site, pkg: join(ROOT, "pkg") });
  console.log(`     playground: ${built.files} files, ${(built.bytes / 1024).toFixed(0)} KiB`);
  // A plain static file server: files only (a folder's index.html), nothing that knows the playground.
  server = await serveStatic({ "/docauto/": site, "/checks/": join(ROOT, "tests", "js", "playground") });
  const url = `${server.url}/docauto/?timeScale=0.3`;
  browser = await launch();
  const page = await browser.newPage();
  const errors = [];
  let streamsCut = 0;
  page.on("pageerror", (e) => {
    const message = String(e?.message ?? e);
    // Firefox ESR reports every response a Service Worker streams that the page stops reading (an EventSource
    // closed, a fetch aborted, the page navigating away) as this error of the page, even for a five-line worker
    // answering `new Response(new ReadableStream(...))` (tried here): the playground's event stream, cut at each
    // reload. It is counted, not an error of the playground.
    if (FIREFOX && message.includes("A ServiceWorker intercepted the request and encountered an unexpected error")) streamsCut++;
    else errors.push(`page error: ${message}`);
  });
  page.on("console", (m) => m.type() === "error" && errors.push(`console error: ${m.text()}`));

  let state = {};
  const check = async (name, src = `${server.url}/checks/checks.js`) => {
    const out = await page.evaluate(async ([url, n, s]) => (await import(url)).check(n, s), [src, name, state]);
    for (const line of out.lines) log(line);
    state = out.state;
  };
  const load = async (how) => {
    if (how === "reload") await page.reload({ waitUntil: "load" });
    else await page.goto(url, { waitUntil: "load" });
  };

  await load("goto");
  for (const name of ["ready", "documents", "inbox", "webhooks", "live"]) await check(name);
  await load("reload");
  await check("reloaded");
  await check("offline");
  const navigated = page.waitForNavigation({ waitUntil: "load" });
  await check("reset");
  await navigated;
  await check("emptied");

  // the same folder served at the root of another origin (another port): it boots there too
  rootServer = await serveStatic({ "/checks/": join(ROOT, "tests", "js", "playground"), "/": site });
  await page.goto(`${rootServer.url}/`, { waitUntil: "load" });
  await check("ready", `${rootServer.url}/checks/checks.js`);
  log(`${errors.length === 0 ? "ok  " : "FAIL"} no page error and no console error${errors.length ? ` (${errors.join(" | ").slice(0, 600)})` : ""}`);
  // three navigations away from a page reading the event stream (the reload, the reset, the root): one report each
  if (FIREFOX) log(`${streamsCut <= 3 ? "ok  " : "FAIL"} firefox: ${streamsCut} report(s) of a cut Service Worker stream, one per navigation at most`);
}

main().then(finish, (e) => {
  log(`FAIL setup: ${e?.stack ?? e}`);
  finish();
});
