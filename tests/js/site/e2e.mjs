// The documentation site end to end in a browser: built by www/site/build.mjs (what `cargo xtask site` runs) into a
// temporary folder, served by a plain static file server of this file (node:http) under /docauto/, and opened in
// headless Chromium (playwright-core), or with `--browser firefox` in Debian's firefox-esr (puppeteer-core over
// WebDriver BiDi), or with `--browser webkit` in WebKitGTK's MiniBrowser (tests/js/webkit.mjs, under Xvfb). One
// browser, one tab; every page is visited in turn through the navigation, and on each:
//
// - the page loads with no page error and no console error (Chromium and Firefox report them to the driver; every
//   engine also to a recorder this server adds at the top of each page, as WebDriver classic reports neither);
// - every Run button gives the output the docs test expects of its block (tests/docs/run.mjs, read here from the
//   Markdown, not from the page): `expect=` of its directive, a node --test report with every test passed, the
//   2xx / 400 body_mismatch (/ 200 duplicate) answers of a webhook receiver; a page example shows `expect=` after
//   its `click=` and no error after its `after=`;
// then: editing a block changes what it prints; the emulator's reset; the same folder served at the root of another
// origin runs an example too; the playground's page loads; nothing was requested from another origin (every request
// the browser made, recorded); the navigation reached every page.
//
// Run: `node tests/js/site/e2e.mjs [--browser chromium|firefox|webkit]` (needs pkg/ from `cargo xtask build`).
// Prints `ok`/`FAIL` lines, a RESULT line and `N passed, N failed`; exits non-zero on a failure.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { blocksOf } from "../../docs/blocks.mjs";
import { buildSite } from "../../../www/site/build.mjs";
import { serveStatic } from "../../../www/static.mjs";
import { launchChromium } from "../chromium.mjs";
import { report } from "../common.mjs";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const at = process.argv.indexOf("--browser");
const BROWSER = at >= 0 ? process.argv[at + 1] : "chromium";
const SUITE = `site e2e (${BROWSER})`;
const LIMIT_MS = Number(process.env.SITE_LIMIT_MS ?? 420_000);
const BASE = "/docauto/";
const TIME_SCALE = 0.2;
const tally = { passed: 0, failed: 0 };
const log = (ok, line) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${line}`);
  if (ok) tally.passed++;
  else tally.failed++;
};

let browser;
let server;
let dir;
const cleanups = [];
const watchdog = setTimeout(() => {
  log(false, `the whole file took more than ${LIMIT_MS / 1000} s`);
  finish();
}, LIMIT_MS);

async function finish() {
  clearTimeout(watchdog);
  await browser?.close().catch(() => {});
  await server?.close().catch(() => {});
  for (const c of cleanups) await c().catch(() => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
  report(SUITE, tally);
  console.log(`${tally.passed} passed, ${tally.failed} failed`);
  process.exit(tally.failed === 0 ? 0 : 1);
}

/**
 * What this server adds at the top of every HTML page it serves: a recorder of the page's errors (uncaught errors,
 * failed loads, unhandled rejections, console.error) in `window.__siteErrors`, which every engine's driver can read.
 */
const RECORDER = `<script>(() => {
  const errors = (window.__siteErrors = []);
  addEventListener("error", (e) => errors.push(e.message ? "error: " + e.message : "failed to load " + (e.target?.src || e.target?.href || e.target?.tagName)), true);
  addEventListener("unhandledrejection", (e) => errors.push("unhandled rejection: " + (e.reason?.stack || e.reason)));
  const error = console.error.bind(console);
  console.error = (...args) => { errors.push("console.error: " + args.map(String).join(" ")); error(...args); };
})();</script>`;

/** A plain static file server of `root` under `prefix` on 127.0.0.1, each HTML page with the recorder above. */
const serve = (root, prefix) => serveStatic({ [prefix]: root }, { html: (text) => text.replace("<head>", `<head>\n${RECORDER}`) });

async function launch() {
  if (BROWSER === "firefox") {
    const { launchFirefox } = await import("../firefox.mjs");
    return launchFirefox({ audio: true });
  }
  if (BROWSER === "webkit") {
    const { launchWebKit } = await import("../webkit.mjs");
    return launchWebKit({ record: true });
  }
  const { speechWav } = await import("../realtime/harness.mjs");
  const wav = speechWav();
  cleanups.push(async () => rmSync(join(wav, ".."), { recursive: true, force: true }));
  return launchChromium({ microphone: wav });
}

/** The expectations of the docs test, by `file:line` of each block (read from the Markdown, not from the page). */
function expectations() {
  const out = new Map();
  const files = [
    ...readdirSync(ROOT).filter((f) => f.endsWith(".md")),
    ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
  ];
  for (const f of files) {
    for (const b of blocksOf(f, readFileSync(join(ROOT, f), "utf8"))) if (b.directive) out.set(`${f}:${b.line}`, b);
  }
  return out;
}

/** Whether a Run's output holds what the docs test holds of its block; a reason when it does not. */
function judge(block, output) {
  const d = block.directive;
  if (d.attrs.deliveries) {
    if (!/delivery evt_\w+ \([\w.]+\), signed by the emulator: 2\d\d /.test(output)) return "the signed delivery was not answered 2xx";
    if (!/the same signature over a tampered body: 400 \{"error":"body_mismatch"\}/.test(output)) return 'the tampered body was not answered 400 {"error":"body_mismatch"}';
    if (d.attrs.deliveries === "handle" && !/the same delivery again: 200 \{.*"duplicate":true/.test(output)) return "the same delivery again was not answered 200 duplicate";
    return null;
  }
  if (d.kind === "node-test") {
    const m = /ℹ tests (\d+), pass (\d+), fail (\d+)/.exec(output);
    if (!m) return "no test report";
    if (Number(m[3]) !== 0 || Number(m[2]) < 1) return `pass ${m[2]}, fail ${m[3]}`;
    return null;
  }
  if (d.attrs.expect && !new RegExp(d.attrs.expect).test(output)) return `the output does not match /${d.attrs.expect}/`;
  return null;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const t0 = Date.now();
  dir = mkdtempSync(join(tmpdir(), "docauto-site-"));
  const site = join(dir, "site");
  const built = await buildSite({ out: site });
  console.log(`     site: ${built.pages.length} pages, ${built.files} files, ${(built.bytes / 1024).toFixed(0)} KiB (built in ${Date.now() - t0} ms)`);
  server = await serve(site, BASE);
  const origin = server.url;
  browser = await launch();
  const page = await browser.newPage();
  const driverErrors = [];
  const offOrigin = new Set();
  const allowed = new Set([origin]);
  let seen = 0;
  const noteRequest = (url) => {
    seen++;
    if (/^(blob|data):/.test(url)) return;
    try {
      if (!allowed.has(new URL(url).origin)) offOrigin.add(url);
    } catch {
      offOrigin.add(url);
    }
  };
  if (BROWSER === "webkit") {
    page.on("request", (r) => noteRequest(r.url()));
  } else {
    page.on("request", (r) => noteRequest(r.url()));
    page.on("pageerror", (e) => driverErrors.push(`page error: ${e?.message ?? e}`));
    page.on("console", (m) => m.type() === "error" && driverErrors.push(`console error: ${m.text()}`));
  }
  const until = (fn, arg, ms) =>
    BROWSER === "firefox" ? page.waitForFunction(fn, { timeout: ms, polling: 100 }, arg) : page.waitForFunction(fn, arg, { timeout: ms, polling: 100 });
  const errorsNow = async () => [...driverErrors.splice(0), ...((await page.evaluate(() => (window.__siteErrors ?? []).splice(0)).catch(() => [])) ?? [])];
  // The page emulator's delays shortened (`?timeScale=`, as the playground's test does): the expectations are the
  // same, the agent runs behind the examples and the deliveries take a fifth of the time.
  const goto = async (url) => {
    const scaled = url.includes("/playground/") ? url : `${url}?timeScale=${TIME_SCALE}`;
    await page.goto(scaled, BROWSER === "webkit" ? undefined : { waitUntil: "load" });
  };

  // The navigation, from the home page: every page it links to, in its order.
  await goto(`${origin}${BASE}index.html`);
  const nav = await page.evaluate(() => [...document.querySelectorAll("nav.side a")].map((a) => a.href));
  const built_ = new Set(built.pages.map((p) => new URL(`${BASE}${p}`, origin).href));
  const missing = [...built_].filter((p) => !nav.includes(p));
  log(missing.length === 0 && nav.length > 0, `the navigation links every page (${nav.length} links; ${built.pages.length} pages built)${missing.length ? `: missing ${missing.join(", ")}` : ""}`);

  const expected = expectations();
  const timings = [];
  let runs = 0;
  for (const url of nav.filter((u) => !u.includes("/playground/"))) {
    const name = url.slice(`${origin}${BASE}`.length);
    await goto(url);
    const blocks = await page.evaluate(() =>
      [...document.querySelectorAll('[data-run="page"]')].map((el) => ({ file: el.dataset.file, line: el.dataset.line, kind: el.dataset.kind })),
    );
    const shown = await page.evaluate(() => (document.querySelector("article.doc")?.innerText ?? "").length);
    if (blocks.length) await until(() => document.documentElement.dataset.examples === "ready", null, 10_000);
    let errors = await errorsNow();
    log(errors.length === 0 && shown > 20, `${name}: loads and shows its text (${shown} characters) with no error${errors.length ? `: ${errors.join(" | ").slice(0, 500)}` : ""}`);
    for (const b of blocks) {
      const id = `${b.file}:${b.line}`;
      const block = expected.get(id);
      const sel = `[data-file="${b.file}"][data-line="${b.line}"]`;
      const started = Date.now();
      if (!block) {
        log(false, `${id}: the page has a Run button for a block the Markdown does not have`);
        continue;
      }
      runs++;
      let why = null;
      try {
        if (b.kind === "page") why = await runPageExample(page, sel, block, until);
        else {
          await page.click(`${sel} button.run`);
          await until((s) => ["done", "failed"].includes(document.querySelector(s)?.dataset.state), sel, 90_000);
          const output = await page.evaluate((s) => document.querySelector(`${s} .run-output`).textContent, sel);
          why = judge(block, output);
          if (!why && (await page.evaluate((s) => document.querySelector(s).dataset.state, sel)) !== "done") why = `the page says it failed: ${output.slice(-400)}`;
          if (why) why += ` | output: ${output.slice(0, 700)}`;
        }
      } catch (e) {
        const output = await page.evaluate((s) => document.querySelector(`${s} .run-output`)?.textContent ?? "", sel).catch(() => "");
        why = `${e.message.split("\n")[0]} | output: ${output.slice(0, 700)}`;
      }
      errors = await errorsNow();
      if (errors.length) why = `${why ? `${why}; ` : ""}errors: ${errors.join(" | ").slice(0, 500)}`;
      const secs = (Date.now() - started) / 1000;
      timings.push([id, secs]);
      log(!why, `${id} (${block.directive.kind}) Run gives the expected output in ${secs.toFixed(1)} s${why ? `: ${why}` : ""}`);
    }
  }

  // Editing a block changes what it prints (the first example of the client guide, agents listed).
  await goto(`${origin}${BASE}docs/client.html`);
  await until(() => document.documentElement.dataset.examples === "ready", null, 10_000);
  const first = await page.evaluate(() => {
    const el = document.querySelector('[data-run="page"]');
    return `[data-file="${el.dataset.file}"][data-line="${el.dataset.line}"]`;
  });
  await page.click(`${first} button.edit`);
  const original = await page.evaluate((s) => document.querySelector(`${s} textarea.editor`).value, first);
  const edited = original.replace("console.log(agent.id, agent.name)", 'console.log("edited in the page:", agent.id)');
  await page.evaluate(
    ([s, text]) => {
      const area = document.querySelector(`${s} textarea.editor`);
      area.value = text;
      area.dispatchEvent(new Event("input", { bubbles: true }));
    },
    [first, edited],
  );
  await page.click(`${first} button.run`);
  await until((s) => ["done", "failed"].includes(document.querySelector(s)?.dataset.state), first, 60_000);
  const editedOut = await page.evaluate((s) => document.querySelector(`${s} .run-output`).textContent, first);
  log(
    edited !== original && /edited in the page: agt_contract_review/.test(editedOut) && !/edited in the page/.test(original),
    `editing a block changes what it prints${/edited in the page: agt_/.test(editedOut) ? "" : `: ${editedOut.slice(0, 400)}`}`,
  );

  // Reset: a new emulator, and the examples run against it.
  await page.evaluate(() => document.querySelector(".run-note button.reset").click());
  await until(() => document.querySelector(".run-note")?.dataset.resets === "1", null, 20_000);
  await page.click(`${first} button.edit`); // back to the text as written
  await page.click(`${first} button.run`);
  await until((s) => ["done", "failed"].includes(document.querySelector(s)?.dataset.state), first, 60_000);
  const afterReset = await page.evaluate((s) => document.querySelector(`${s} .run-output`).textContent, first);
  const resetErrors = await errorsNow();
  log(/agt_contract_review/.test(afterReset) && !/edited in the page/.test(afterReset) && resetErrors.length === 0, `Reset makes a new emulator the examples run against${resetErrors.length ? `: ${resetErrors.join(" | ")}` : ""}`);

  // The same folder at the root of another origin: a guide's example runs there too.
  const rootServer = await serve(site, "/");
  cleanups.push(rootServer.close);
  allowed.add(rootServer.url);
  await goto(`${rootServer.url}/docs/client.html`);
  await until(() => document.documentElement.dataset.examples === "ready", null, 10_000);
  await page.click(`${first} button.run`);
  await until((s) => ["done", "failed"].includes(document.querySelector(s)?.dataset.state), first, 60_000);
  const atRoot = await page.evaluate((s) => document.querySelector(`${s} .run-output`).textContent, first);
  const rootErrors = await errorsNow();
  log(/agt_contract_review/.test(atRoot) && rootErrors.length === 0, `served at the root of ${rootServer.url}, a guide's example runs${rootErrors.length ? `: ${rootErrors.join(" | ")}` : ""}`);

  // The playground, from the navigation.
  const playground = nav.find((u) => u.includes("/playground/"));
  if (playground) {
    await goto(playground);
    const title = await page.evaluate(() => document.title);
    log(/playground/i.test(title), `the navigation reaches the playground (${title})`);
  } else {
    log(false, "the navigation has no Playground link");
  }

  log(
    offOrigin.size === 0 && seen > built.pages.length,
    `nothing was requested from another origin than ${[...allowed].join(" and ")} (${seen} requests seen by the driver)${offOrigin.size ? `: ${[...offOrigin].slice(0, 5).join(", ")}` : ""}`,
  );
  log(runs > 0, `${runs} Run buttons pressed`);
  const slow = timings.sort((a, b) => b[1] - a[1]).slice(0, 5).map(([id, s]) => `${id} ${s.toFixed(1)} s`);
  console.log(`     the run took ${((Date.now() - t0) / 1000).toFixed(0)} s; slowest Runs: ${slow.join(", ")}`);
}

/** A page example: Run, then its `click=`, until its `expect=` shows in the page or the console; then `after=`. */
async function runPageExample(page, sel, block, until) {
  const attrs = block.directive.attrs;
  // Firefox's and WebKit's fake microphones play a continuous tone, which the service transcribes only once it
  // stops: the page's sample sound (speech, then silence) is used there, as a reader without a microphone would.
  if (BROWSER !== "chromium") await page.evaluate((s) => document.querySelector(`${s} input.clip`)?.click(), sel);
  await page.click(`${sel} button.run`);
  await until((s) => ["done", "failed"].includes(document.querySelector(s)?.dataset.state), sel, 60_000);
  const state = await page.evaluate((s) => document.querySelector(s).dataset.state, sel);
  if (state !== "done") return `the page part did not load: ${await page.evaluate((s) => document.querySelector(`${s} .run-output`).textContent, sel)}`;
  if (attrs.click) await page.click(`${sel} .page-frame ${attrs.click}`);
  const expect = attrs.expect ?? ".";
  try {
    await until(
      ([s, source]) => {
        const el = document.querySelector(s);
        return new RegExp(source).test(`${el.querySelector(".page-frame").innerText}\n${el.querySelector(".run-output").textContent}`);
      },
      [sel, expect],
      45_000,
    );
  } catch {
    const text = await page.evaluate((s) => document.querySelector(s).innerText, sel);
    return `the page never showed /${expect}/: ${text.slice(-600)}`;
  }
  if (attrs.after) {
    await page.click(`${sel} .page-frame ${attrs.after}`);
    await sleep(500);
  }
  return null;
}

main().then(finish, (e) => {
  log(false, `setup: ${e?.stack ?? e}`);
  finish();
});
