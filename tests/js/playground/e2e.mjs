// The static playground end to end in a browser: `cargo xtask playground`'s folder (written here by
// www/playground/build.mjs from pkg/) served by a plain static file server under a sub-path (/docauto/), opened in
// headless Chromium (playwright-core; its fake microphone plays an espeak-ng WAV) or, with `--browser firefox`, in
// Debian's firefox-esr (puppeteer-core over WebDriver BiDi; its fake microphone plays a tone, PulseAudio gives it an
// audio output). The checks run inside the page (checks.js: plain DOM), so another driver can run them unchanged:
// each panel, a delivery verified in the inspector, live transcription showing text, a reload keeping the run, the
// reset button, no request off the page's origin, and no error reported by the browser (page errors and console
// errors alike, in each engine) at any step; and the playground's in-page EventSource against the browser's own.
//
// Run: `node tests/js/playground/e2e.mjs [--browser firefox]` (needs pkg/ from `cargo xtask build`). Prints
// `N passed, N failed`; exits non-zero on a failure.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildPlayground } from "../../../www/playground/build.mjs";
import { serveStatic } from "../../../www/static.mjs";
import { launchChromium } from "../chromium.mjs";
import { launchFirefox } from "../firefox.mjs";
import { ROOT, speechWav } from "../realtime/harness.mjs";
import { listening, report } from "../common.mjs";

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
let streams;
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
  await streams?.close().catch(() => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (wav) rmSync(dirname(wav), { recursive: true, force: true });
  report(SUITE, tally);
  console.log(`${tally.passed} passed, ${tally.failed} failed`);
  process.exit(tally.failed === 0 ? 0 : 1);
}

async function launch() {
  if (FIREFOX) return launchFirefox({ audio: true });
  wav = speechWav();
  return launchChromium({ microphone: wav });
}

/**
 * The event-source check's server: its page, the built event-source.js, checks.js, and `stream?key=K`, an event
 * stream written in awkward pieces that ends; the next connection of the same key answers with the Last-Event-ID it
 * was sent.
 */
async function streamServer(site) {
  const connections = new Map();
  const files = {
    "/event-source.js": join(site, "event-source.js"),
    "/checks.js": join(ROOT, "tests", "js", "playground", "checks.js"),
  };
  const FIRST = [
    "\uFEFFretry: 200\r\n", ": a comment\r", "\n", "data: one\r", "\ndata:two\n\n",
    'event: delivery\ndata: {"a":1}\nid: 7\n\n', "data\n\n", "id: 8\r", "data: x\r\r", "event: foo\n", "data: never dispatched",
  ];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/") return res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>event stream</title>");
    if (files[url.pathname]) {
      let text;
      try {
        text = readFileSync(files[url.pathname]);
      } catch {
        return res.writeHead(404).end();
      }
      return res.writeHead(200, { "content-type": "text/javascript" }).end(text);
    }
    if (url.pathname !== "/stream") return res.writeHead(404).end();
    const key = url.searchParams.get("key");
    const n = (connections.get(key) ?? 0) + 1;
    connections.set(key, n);
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" });
    const again = [`data: again, after ${req.headers["last-event-id"] ?? "no id"}\n\n`, "event: bar\ndata: é ü\n\n"];
    const parts = n === 1 ? FIRST : again;
    for (const part of parts) {
      res.write(part);
      await new Promise((r) => setTimeout(r, 15));
    }
    if (n === 1) res.end();
  });
  return listening(server);
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
  // Whatever the browser reports as an error fails the file, with no allow-list: an uncaught exception or a rejection
  // nobody handled (`pageerror`), a `console.error` or `console.assert` of the page, and what the engine itself logs as
  // an error of the page (a resource that failed to load; in Firefox over WebDriver BiDi, its script errors, such as
  // a Service Worker's interception that failed, arrive as `pageerror` too). Each is filed under the step it happened
  // in, so a failure says whether the first visit, the reload, the reset or the other origin reported it.
  const errors = [];
  let phase = "the first visit";
  page.on("pageerror", (e) => errors.push({ phase, text: `page error: ${String(e?.message ?? e)}` }));
  page.on("console", (m) => ["error", "assert"].includes(m.type()) && errors.push({ phase, text: `console ${m.type()}: ${m.text()}` }));
  let counted = 0;
  // one line per step: what was reported since the last line (a late report names the step it came in)
  const noErrors = () => {
    const seen = errors.slice(counted).map((e) => (e.phase === phase ? e.text : `${e.text} [during ${e.phase}]`));
    counted = errors.length;
    log(`${seen.length === 0 ? "ok  " : "FAIL"} no error reported by the browser during ${phase}${seen.length ? ` (${seen.length}: ${seen.join(" | ").slice(0, 600)})` : ""}`);
  };

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
  noErrors();
  // The reload happens with the page controlled by the worker (the `ready` checks before and after say so), its event
  // stream open and its backend answering the worker's requests: a user's reload. Firefox reported a response the
  // worker was still streaming to the page (the event stream, when it went through the worker) as a page error here.
  phase = "the reload";
  await load("reload");
  await check("reloaded");
  await check("offline");
  noErrors();
  phase = "the reset (a reload the page makes)";
  const navigated = page.waitForNavigation({ waitUntil: "load" });
  await check("reset");
  await navigated;
  await check("emptied");
  noErrors();

  // the same folder served at the root of another origin (another port): it boots there too
  phase = "the move to the root of another origin";
  rootServer = await serveStatic({ "/checks/": join(ROOT, "tests", "js", "playground"), "/": site });
  await page.goto(`${rootServer.url}/`, { waitUntil: "load" });
  await check("ready", `${rootServer.url}/checks/checks.js`);
  noErrors();

  // the playground's in-page EventSource against the browser's own, in a page of a server that streams
  streams = await streamServer(site);
  const other = await browser.newPage();
  await other.goto(`${streams.url}/`, { waitUntil: "load" });
  const out = await other.evaluate(async (src) => (await import(src)).check("eventSource"), `${streams.url}/checks.js`);
  for (const line of out.lines) log(line);
  await other.close();
}

main().then(finish, (e) => {
  log(`FAIL setup: ${e?.stack ?? e}`);
  finish();
});
