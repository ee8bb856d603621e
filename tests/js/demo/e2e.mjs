// The demo web app (www/) end to end in headless Chromium against the emulator, started by www/dev.mjs's
// `startDemo`. Each panel's main flow is driven through the page and checked on what the page shows; a screenshot
// per panel (and one at 375 px) lands in target/e2e/. The fake microphone plays an espeak-ng WAV.
// With `--browser webkit` the same checks run in WebKit (WebKitGTK's MiniBrowser over WebDriver, tests/js/webkit.mjs)
// under Safari's own autoplay policy (the microphone button's click is the user gesture), screenshots in
// target/e2e/webkit/; its mock microphone plays a steady hum with beeps, so the final line comes at stop.
//
// Run: `node tests/js/demo/e2e.mjs [--browser webkit]` (needs pkg/ from `cargo xtask build` and
// target/debug/docauto-emulator from `cargo build -p docauto-emulator`). Prints `N passed, N failed`; exits non-zero on
// a failure.
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { startDemo } from "../../../www/dev.mjs";
import { launchWebKit } from "../webkit.mjs";
import { ROOT, speechWav } from "../realtime/harness.mjs";
import { Checks, assert } from "../suite.mjs";
import { report } from "../common.mjs";
import { launchChromium } from "../chromium.mjs";

const WEBKIT = process.argv.includes("--browser") && process.argv[process.argv.indexOf("--browser") + 1] === "webkit";
const ENGINE = WEBKIT ? "webkit" : "chromium";
const SHOTS = WEBKIT ? join(ROOT, "target", "e2e", "webkit") : join(ROOT, "target", "e2e");
const LIMIT_MS = 170_000;

const t = new Checks(console.log);
let failShot = null; // set once the page exists: a screenshot of the page when a check fails
let current = "the first load"; // the check running, to file what the browser reports under it
const run = t.run.bind(t);
t.run = (name, fn) => run(name, async () => {
  current = name;
  try {
    await fn();
  } catch (e) {
    await failShot?.(name).catch(() => {});
    throw e;
  }
});
let demo;
let browser;
let wav;

const watchdog = setTimeout(() => {
  console.log(`FAIL the whole file took more than ${LIMIT_MS / 1000} s`);
  finish(1);
}, LIMIT_MS);

async function finish(forced = 0) {
  clearTimeout(watchdog);
  await browser?.close().catch(() => {});
  await demo?.stop().catch(() => {});
  if (wav) rmSync(dirname(wav), { recursive: true, force: true });
  if (forced) t.failed++;
  report(`demo e2e (${ENGINE})`, t);
  console.log(`${t.passed} passed, ${t.failed} failed`);
  process.exit(t.failed === 0 ? 0 : 1);
}

/** Reads the backend's event stream until `pick(record)` is true; resolves to that record. */
async function deliveryFromStream(url, pick, ms = 10_000) {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  try {
    const r = await fetch(`${url}/api/events`, { signal: ac.signal });
    const reader = r.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error("the event stream ended");
      buf += dec.decode(value, { stream: true });
      for (const line of buf.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const rec = JSON.parse(line.slice(6));
        if (pick(rec)) return rec;
      }
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

async function main() {
  mkdirSync(SHOTS, { recursive: true });
  wav = WEBKIT ? null : speechWav();
  demo = await startDemo({ port: 0, timeScale: 0.3 });
  console.log(`     demo ${demo.url}, emulator ${demo.baseUrl}`);
  browser = WEBKIT ? await launchWebKit({ record: true, autoplay: "default" }) : await launchChromium({ microphone: wav });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const requests = [];
  const statuses = [];
  context.on("request", (req) => requests.push({ url: req.url(), headers: req.headers() }));
  context.on("response", (res) => statuses.push({ url: res.url(), status: res.status() }));
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  // Every error the browser reports in any page of the context (an uncaught exception or unhandled rejection, a
  // console error of the page or of the engine, such as a resource that failed to load) fails the last check, filed
  // under the check it happened in. WebDriver classic (WebKit here) reports neither, so only Chromium checks this.
  const errors = [];
  if (!WEBKIT) {
    context.on("weberror", (e) => errors.push({ check: current, text: `page error: ${e.error()?.message ?? e.error()}` }));
    context.on("console", (m) => {
      if (!["error", "assert"].includes(m.type())) return;
      errors.push({ check: current, text: `console ${m.type()}: ${m.text()}`, url: m.location()?.url ?? "" });
    });
  }
  await page.goto(`${demo.url}/`);
  await page.waitForSelector("body[data-ready='true']");
  const shot = (name, p = page) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const tab = (name) => page.click(`#tab-${name}`);
  let fails = 0;
  failShot = (name) => page.screenshot({ path: join(SHOTS, `failed-${++fails}.png`), fullPage: true }).then(() =>
    console.log(`     (screenshot of the failure "${name}": ${relative(ROOT, SHOTS)}/failed-${fails}.png)`));
  const text = (sel) => page.textContent(sel);

  await t.run("documents: a bad schema is marked at its path in the page and nothing can be sent", async () => {
    const good = await page.inputValue("#schema");
    const bad = JSON.parse(good);
    bad.properties.total_due = { oneOf: [{ type: "string" }, { type: "null" }] };
    await page.fill("#schema", JSON.stringify(bad, null, 2));
    await page.waitForFunction(() => document.querySelector("#schema-status").textContent.includes("invalid_schema"));
    const status = await text("#schema-status");
    assert(status.includes("schema.properties.total_due.oneOf"), `status: ${status}`);
    assert(await page.isDisabled("#run-extract"), "Extract stays enabled with an invalid schema");
    const marked = await text("#schema-backdrop mark");
    assert(marked.startsWith('"oneOf"'), `marked: ${marked}`);
    await page.fill("#schema", good);
    await page.waitForSelector("#schema-status.ok");
    assert(!(await page.isDisabled("#run-extract")), "Extract disabled with a valid schema");
  });

  await t.run("documents: extract with citations shows the values and marks each cited span", async () => {
    await page.click("#run-extract");
    await page.waitForSelector("#values tr[data-field='invoice_number'] td.value");
    assert((await text("#values tr[data-field='invoice_number'] td.value")) === "INV-2041", "invoice_number");
    assert((await text("#values tr[data-field='total_due'] td.value")) === "1,284.50 EUR", "total_due");
    assert((await text("#values tr[data-field='customer.name'] td.value")) === "Northwind Traders", "customer.name");
    const marks = await page.$$eval("#doc-text mark.cite", (ms) => ms.map((m) => [m.dataset.field, m.textContent]));
    assert(marks.length >= 6, `${marks.length} marked spans`);
    assert(marks.some(([f, s]) => f === "total_due" && s === "Total due: 1,284.50 EUR"), JSON.stringify(marks));
    const extract = statuses.find((s) => s.url.endsWith("/api/extract"));
    assert(extract?.status === 202, `POST /api/extract answered ${extract?.status} (expected 202 then waitFor)`);
    assert((await page.$$("#jobs .job [data-status='processed']")).length >= 1, "no processed run in the progress list");
  });

  await t.run("documents: parse and redact the same document show their results", async () => {
    await page.click("#run-parse");
    await page.waitForFunction(() => document.querySelector("#parse-out pre")?.textContent.includes("Invoice number: INV-2041"));
    await page.click("#run-redact");
    await page.waitForSelector("#redact-out .redacted");
    const red = await text("#redact-out pre");
    assert(red.includes("[REDACTED:EMAIL]") && !red.includes("billing@northwind.example"), red);
    await shot("documents");
  });

  await t.run("inbox: a contract review run is driven to its result (human step, reject needs a note, approve)", async () => {
    await tab("inbox");
    await page.waitForSelector("#agents li.agent >> nth=3");
    const card = page.locator("li.agent[data-agent='agt_contract_review']");
    await card.locator("select").selectOption("contract");
    await card.locator("button.primary").click();
    await page.waitForSelector("section.human-task[data-task='legal_review']");
    await page.fill("section.human-task textarea", "Clauses 2 and 3 checked.");
    await page.click("section.human-task button.complete");
    await page.waitForSelector("section.approval");
    const params = await text("section.approval .params");
    assert(params.includes("counterparty@example.com") && params.includes("Reviewed contract"), params);
    await page.click("section.approval button.reject");
    await page.waitForSelector("section.approval .error[data-code='note_required']");
    await page.click("section.approval button.approve");
    await page.waitForSelector("#run-detail .result");
    assert((await page.$$("section.approval")).length === 0, "the approval is still listed after approve");
    assert((await text("#run-detail .result")).includes("Contract reviewed and sent to the counterparty."), "result");
    assert((await page.getAttribute("#run-detail .run-head .pill", "data-status")) === "completed", "run status");
    const done = await page.$$eval("#run-detail .ledger li.t-completed", (l) => l.length);
    assert(done === 3, `${done} completed steps`);
    await page.waitForFunction(() => [...document.querySelectorAll("#run-detail .timeline li.ok")].some((l) => l.textContent.includes("agent_run.completed")));
    await shot("inbox");
  });

  await t.run("inbox: a page opened later lists the runs the backend started (GET /api/agent-runs)", async () => {
    const id = await text("#run-detail .run-head code");
    const later = await context.newPage();
    try {
      await later.goto(`${demo.url}/#inbox`);
      await later.waitForSelector("body[data-ready='true']");
      await later.waitForFunction((run) => document.querySelector("#runs")?.textContent.includes(run), id);
      await later.waitForFunction((run) => document.querySelector("#run-detail .run-head code")?.textContent === run, id);
      assert((await later.getAttribute("#run-detail .run-head .pill", "data-status")) === "completed", "the listed run's status");
    } finally {
      await later.close();
    }
  });

  await t.run("live: the fake microphone gives a final line, the credits meter runs, stop releases", async () => {
    await tab("live");
    await page.evaluate(() => {
      // The transcriber asks for speech processing by default (echo cancellation, noise suppression, auto gain).
      // Chromium's processing cuts the fake microphone's synthetic voice to well under a second, too short for the
      // service's partials (about every 2 s): the page's request is recorded for the assertion below, and the fake
      // device is opened unprocessed, as a plain microphone would sound.
      window.__audioConstraints = [];
      const devices = navigator.mediaDevices;
      const open = devices.getUserMedia.bind(devices);
      devices.getUserMedia = (constraints) => {
        window.__audioConstraints.push(JSON.parse(JSON.stringify(constraints?.audio ?? null)));
        const raw = { echoCancellation: false, noiseSuppression: false, autoGainControl: false };
        return open({ ...constraints, audio: { ...(constraints?.audio ?? {}), ...raw } });
      };
      window.__partials = 0;
      new MutationObserver(() => {
        if (document.querySelector("#transcript .partial")) window.__partials++;
      }).observe(document.querySelector("#transcript"), { childList: true, subtree: true });
    });
    await page.click("#mic");
    await page.waitForSelector("#mic[aria-pressed='true']");
    // WebKit's mock microphone never pauses: its only final line is the one stop() flushes.
    if (!WEBKIT) await page.waitForSelector("#transcript p.final", { timeout: 40_000 });
    // The fake microphone loops its WAV from the browser's start: the first segment heard may be the tail of a
    // sentence, shorter than the service's partial cadence (about 2 s). The next sentences are whole.
    await page.waitForFunction(() => window.__partials > 0, null, { timeout: 30_000 });
    assert(Number(await text("#credits")) >= 5, "credits meter");
    await page.click("#mic");
    await page.waitForSelector("#mic[aria-pressed='false']", { timeout: 15_000 });
    const line = await text("#transcript p.final");
    assert(/speech \d/.test(line), `final: ${line}`);
    assert(Number(await text("#credits")) >= 7, `credits after stop: ${await text("#credits")}`);
    assert((await text("#live-status")).startsWith("Stopped"), await text("#live-status"));
    assert((await page.$$("#transcript .partial")).length === 0, "a grey partial is left after stop");
    const asked = await page.evaluate(() => window.__audioConstraints);
    const speech = (c) => c?.echoCancellation === true && c?.noiseSuppression === true && c?.autoGainControl === true;
    assert(asked.length > 0 && asked.every(speech), `the page did not ask for speech processing: ${JSON.stringify(asked)}`);
    assert(await page.evaluate(() => window.__partials > 0), "no partial text was shown");
    await shot("live");
  });

  await t.run("webhooks: verified deliveries are listed; forged ones are listed as rejected with their code", async () => {
    const real = await deliveryFromStream(demo.url, (r) => r.verified);
    const post = (body, header) => fetch(`${demo.url}/webhooks`, { method: "POST", headers: { "x-svc-signature": header }, body });
    const forged = await post(JSON.stringify({ eventId: "evt_forged", type: "agent_run.completed", processingId: "agr_forged", occurredAt: new Date().toISOString(), data: {} }), "not-a-token");
    assert(forged.status === 400, `forged delivery answered ${forged.status}`);
    const tampered = await post(real.body.replace(/"status":"\w+"/, '"status":"completed"'), real.header);
    assert(tampered.status === 400, `tampered delivery answered ${tampered.status}`);
    await tab("webhooks");
    await page.waitForSelector("#deliveries code.badge.bad >> text=body_mismatch");
    const rows = await page.$$eval("#deliveries tr", (trs) => trs.map((tr) => tr.textContent));
    assert(rows.some((r) => r.includes("verified") && r.includes("agent_run.approval_requested")), rows.join("\n"));
    assert(rows.some((r) => r.includes("malformed_signature") && r.includes("agr_forged")), rows.join("\n"));
  });

  await t.run("webhooks: a delivery verifies in the browser; a tampered paste is rejected with body_mismatch", async () => {
    await page.click("#deliveries tr.ok button.link >> nth=0");
    await page.click("#delivery-detail button");
    await page.click("#fetch-jwks");
    await page.waitForFunction(() => document.querySelector("#jwks").value.includes("P-256"));
    await page.click("#verify");
    await page.waitForFunction(() => /^(Valid|Rejected)/.test(document.querySelector("#out").textContent));
    const ok = await text("#out");
    assert(ok.startsWith("Valid: agent_run."), ok);
    const body = await page.inputValue("#body");
    await page.fill("#body", body.replace('"object":"agent_run"', '"object":"agent_run" '));
    await page.click("#verify");
    await page.waitForFunction(() => document.querySelector("#out").textContent.startsWith("Rejected"));
    const bad = await text("#out");
    assert(bad.startsWith("Rejected: body_mismatch"), bad);
    await shot("webhooks");
  });

  await t.run("errors: rate limited, credits exhausted and an expired run are shown with their codes", async () => {
    await page.click("#simulate summary");
    await page.click("#sim-rate");
    await page.waitForFunction(() => document.querySelector("#sim-status").textContent.includes("429"));
    await tab("inbox");
    await page.click("#agents-reload");
    await page.waitForSelector("#agents-error .error[data-code='rate_limited']");
    assert((await text("#agents-error")).includes("Retry after 60 s"), await text("#agents-error"));
    await page.click("#agents-reload");
    await page.waitForSelector("#agents li.agent >> nth=3");

    await page.click("#sim-credits");
    await page.waitForFunction(() => document.querySelector("#sim-status").textContent.includes("exhausted"));
    await page.locator("li.agent[data-agent='agt_document_digest'] button.primary").click();
    await page.waitForSelector("#agents-error .error[data-code='credits_exhausted']");
    await page.click("#sim-credits");
    await page.waitForFunction(() => document.querySelector("#sim-status").textContent.includes("restored"));

    const card = page.locator("li.agent[data-agent='agt_contract_review']");
    await card.locator("button.primary").click();
    await page.waitForSelector("section.human-task");
    await page.click("#sim-clock");
    await page.waitForSelector("#run-detail .run-head .pill[data-status='expired']");
    await page.waitForSelector("#run-detail .error[data-code='run_expired']");
    await shot("errors");
  });

  await t.run("phone width: at 375 px nothing overflows sideways (screenshot)", async () => {
    const phone = await context.newPage();
    try {
    await phone.setViewportSize({ width: 375, height: 812 });
    await phone.goto(`${demo.url}/#documents`);
    await phone.waitForSelector("body[data-ready='true']");
    const widths = await phone.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert(widths[0] <= widths[1], `page is ${widths[0]} px wide in a ${widths[1]} px viewport`);
    await shot("documents-375", phone);
    await phone.goto(`${demo.url}/#inbox`);
    await phone.waitForSelector("#agents li.agent");
    const w2 = await phone.evaluate(() => document.documentElement.scrollWidth);
    assert(w2 <= 375, `inbox is ${w2} px wide`);
    await shot("inbox-375", phone);
    } finally {
      await phone.close();
    }
  });

  await t.run("keyboard: the tabs are reachable and switch with the arrow keys; focus is visible", async () => {
    const kb = await context.newPage();
    try {
    await kb.goto(`${demo.url}/`);
    await kb.waitForSelector("body[data-ready='true']");
    let id = "";
    for (let i = 0; i < 8 && id !== "tab-documents"; i++) {
      await kb.keyboard.press("Tab");
      id = await kb.evaluate(() => document.activeElement?.id ?? "");
    }
    assert(id === "tab-documents", `Tab never reached the first tab (at ${id})`);
    const outline = await kb.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert(outline !== "none", "no visible focus outline");
    await kb.keyboard.press("ArrowRight");
    const state = await kb.evaluate(() => [document.activeElement.id, document.querySelector("#panel-inbox").hidden]);
    assert(state[0] === "tab-inbox" && state[1] === false, JSON.stringify(state));
    } finally {
      await kb.close();
    }
  });

  await t.run("no request from the page carries an Authorization header", async () => {
    const local = requests.filter((r) => r.url.startsWith(demo.url));
    assert(local.length >= 20, `only ${local.length} page requests recorded`);
    const withAuth = requests.filter((r) => "authorization" in r.headers);
    assert(withAuth.length === 0, withAuth.map((r) => r.url).join(", "));
    const off = requests.filter((r) => /^(https?|wss?):/.test(r.url) && new URL(r.url).hostname !== "127.0.0.1");
    assert(off.length === 0, `requests left 127.0.0.1: ${off.map((r) => r.url).join(", ")}`);
  });

  if (!WEBKIT) await t.run("no error reported by the browser in any page (page errors, console errors)", async () => {
    // The one expected: the errors check makes the backend answer 429 (rate limited) and 402 (credits exhausted) on
    // purpose, and Chromium logs each such answer to a fetch as a console error of its own.
    const provoked = /^console error: Failed to load resource: the server responded with a status of (429|402) /;
    const expected = (e) => e.check.startsWith("errors:") && provoked.test(e.text) && e.url.startsWith(`${demo.url}/api/`);
    const unexpected = errors.filter((e) => !expected(e));
    assert(unexpected.length === 0, unexpected.map((e) => `${e.text} [during ${e.check}]`).join(" | ").slice(0, 800));
  });
}

main().then(() => finish(0), (e) => {
  console.log(`FAIL setup: ${e?.stack ?? e}`);
  finish(1);
});
