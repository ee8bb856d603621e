// The playground's checks, run inside the page: plain DOM (clicks, inputs, waits on what the page shows), so any
// driver that can load a page and evaluate `(await import(url)).check(name, state)` runs them (Chromium through
// playwright-core, Firefox through puppeteer-core; tests/js/playground/e2e.mjs). Each check resolves to
// `{ lines, passed, failed, state }`: one line per assertion, and what a later check needs (the agent run's id).
//
// The page is www/public's demo under the playground's wiring (www/playground/playground.js): the emulator and the
// demo backend run in it, reached through its Service Worker; nothing leaves the page's origin.

const $ = (sel) => document.querySelector(sel);
const $$ = (sel) => [...document.querySelectorAll(sel)];
const text = (sel) => $(sel)?.textContent ?? "";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, label, ms = 20_000) {
  const end = performance.now() + ms;
  for (;;) {
    const v = await what();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out after ${ms / 1000} s waiting for ${label}`);
    await sleep(50);
  }
}

function click(sel) {
  const el = typeof sel === "string" ? $(sel) : sel;
  if (!el) throw new Error(`nothing to click at ${sel}`);
  el.click();
}

function fill(el, value) {
  el.value = value;
  el.dispatchEvent(new Event("input", { bubbles: true }));
}

const tab = (name) => click(`#tab-${name}`);

class Tally {
  lines = [];
  passed = 0;
  failed = 0;
  state = {};
  ok(name, cond, detail = "") {
    if (cond) this.passed++;
    else this.failed++;
    this.lines.push(`${cond ? "ok  " : "FAIL"} ${name}${cond || !detail ? "" : ` (${String(detail).slice(0, 400)})`}`);
  }
  async step(name, fn) {
    try {
      await fn((cond, detail) => this.ok(name, cond, detail));
    } catch (e) {
      this.ok(name, false, e?.message ?? e);
    }
  }
}

const CHECKS = {
  /** The page is up: the four panels, the playground bar, the emulator in this page, no request off this origin. */
  async ready(t) {
    await t.step("the page boots from static files: panels ready, playground bar, emulator badge", async (ok) => {
      await waitFor(() => document.body.dataset.ready === "true", "the page to be ready", 30_000);
      ok($("#playground") && $("#playground-reset") && text("#service").includes("emulator") && text("#service").includes("emulator.test"), text("header"));
    });
    await t.step("the page is controlled by the playground's Service Worker", async (ok) => {
      ok(Boolean(navigator.serviceWorker?.controller), "no controller");
    });
  },

  /** Documents: extract with citations, then parse and redact the same sample. */
  async documents(t) {
    tab("documents");
    await t.step("documents: extract with citations shows the values and marks the cited spans", async (ok) => {
      await waitFor(() => !$("#run-extract").disabled, "Extract to be enabled");
      click("#run-extract");
      await waitFor(() => $("#values tr[data-field='invoice_number'] td.value"), "the extracted values", 30_000);
      const marks = $$("#doc-text mark.cite");
      ok(
        text("#values tr[data-field='invoice_number'] td.value") === "INV-2041" &&
          text("#values tr[data-field='total_due'] td.value") === "1,284.50 EUR" &&
          marks.length >= 6,
        `${text("#values")} / ${marks.length} marks`,
      );
    });
    await t.step("documents: parse and redact show their results", async (ok) => {
      click("#run-parse");
      await waitFor(() => text("#parse-out pre").includes("Invoice number: INV-2041"), "the parse output", 30_000);
      click("#run-redact");
      await waitFor(() => $("#redact-out .redacted"), "the redaction", 30_000);
      const red = text("#redact-out pre");
      ok(red.includes("[REDACTED:EMAIL]") && !red.includes("billing@northwind.example"), red.slice(0, 200));
    });
  },

  /** Inbox: a contract review run driven to its result; its webhook events verified in its timeline. */
  async inbox(t) {
    tab("inbox");
    await t.step("inbox: a contract review run is driven to its result (human step, approval)", async (ok) => {
      await waitFor(() => $$("#agents li.agent").length === 4, "the four agents");
      const card = $("li.agent[data-agent='agt_contract_review']");
      const select = card.querySelector("select");
      select.value = "contract";
      select.dispatchEvent(new Event("change", { bubbles: true }));
      click(card.querySelector("button.primary"));
      await waitFor(() => $("section.human-task[data-task='legal_review']"), "the human step", 30_000);
      t.state.runId = text("#run-detail .run-head code");
      fill($("section.human-task textarea"), "Clauses 2 and 3 checked.");
      click("section.human-task button.complete");
      await waitFor(() => $("section.approval button.approve"), "the sign-off", 30_000);
      fill($("section.approval textarea"), "Looks right.");
      click("section.approval button.approve");
      await waitFor(() => $("#run-detail .result"), "the result", 30_000);
      ok(
        text("#run-detail .result").includes("Contract reviewed and sent to the counterparty.") &&
          $("#run-detail .run-head .pill")?.dataset.status === "completed",
        text("#run-detail"),
      );
    });
    await t.step("inbox: the run's webhook events arrive verified (agent_run.completed in its timeline)", async (ok) => {
      await waitFor(
        () => $$("#run-detail .timeline li.ok").some((l) => l.textContent.includes("agent_run.completed")),
        "agent_run.completed in the timeline",
      );
      ok(/^agr_/.test(t.state.runId ?? ""), t.state.runId);
    });
  },

  /** Webhooks: the deliveries verified by the backend (WebhookVerifier over the emulator's key set), verified again in the page. */
  async webhooks(t) {
    tab("webhooks");
    await t.step("webhooks: the inspector lists verified deliveries of the run", async (ok) => {
      const rows = await waitFor(() => {
        const r = $$("#deliveries tr.ok");
        return r.some((tr) => tr.textContent.includes("agent_run.completed")) && r;
      }, "a verified agent_run.completed delivery");
      ok(rows.every((tr) => tr.textContent.includes("verified")) && $$("#deliveries tr.bad").length === 0, $("#deliveries").textContent);
    });
    await t.step("webhooks: a delivery verifies in the browser; a tampered body is rejected", async (ok) => {
      click("#deliveries tr.ok button.link");
      await waitFor(() => $("#delivery-detail button.load"), "the delivery's detail");
      click("#delivery-detail button.load");
      click("#fetch-jwks");
      await waitFor(() => $("#jwks").value.includes("P-256"), "the key set");
      click("#verify");
      await waitFor(() => /^(Valid|Rejected)/.test(text("#out")), "the verdict");
      const valid = text("#out");
      $("#body").value = $("#body").value.replace('"object":"agent_run"', '"object":"agent_run" ');
      click("#verify");
      await waitFor(() => text("#out").startsWith("Rejected"), "the tampered verdict");
      ok(valid.startsWith("Valid: agent_run.") && text("#out").startsWith("Rejected: body_mismatch"), `${valid.slice(0, 80)} / ${text("#out").slice(0, 80)}`);
    });
  },

  /** Live: the fake microphone through emulator.WebSocket gives text; stop releases. */
  async live(t) {
    tab("live");
    await t.step("live: the microphone's audio comes back as text over emulator.WebSocket", async (ok) => {
      // Chromium's speech processing cuts its fake microphone's synthetic voice short (see tests/js/demo/e2e.mjs):
      // the device is opened unprocessed, as a plain microphone sounds.
      const devices = navigator.mediaDevices;
      const open = devices.getUserMedia.bind(devices);
      devices.getUserMedia = (c) => open({ ...c, audio: { ...(c?.audio ?? {}), echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
      click("#mic");
      await waitFor(() => $("#mic").getAttribute("aria-pressed") === "true", "the microphone to start", 30_000);
      const line = await waitFor(() => $$("#transcript p").find((p) => /\[speech \d/.test(p.textContent)), "a transcript line", 40_000);
      const shown = line.textContent;
      click("#mic");
      await waitFor(() => $("#mic").getAttribute("aria-pressed") === "false", "the microphone to stop", 20_000);
      ok(Number(text("#credits")) >= 5 && text("#live-status").startsWith("Stopped"), `${shown} / credits ${text("#credits")} / ${text("#live-status")}`);
    });
  },

  /** After a reload: the run and the deliveries are still there (the snapshot and the backend's list in storage). */
  async reloaded(t, state) {
    await CHECKS.ready(t);
    tab("inbox");
    await t.step("reload: the inbox lists the run created before, completed", async (ok) => {
      await waitFor(() => $$("#runs li").some((li) => li.textContent.includes(state.runId)), `${state.runId} in the runs list`);
      await waitFor(() => text("#run-detail .run-head code") === state.runId, "the run's detail");
      ok($("#run-detail .run-head .pill")?.dataset.status === "completed" && text("#run-detail .result").includes("Contract reviewed"), text("#run-detail"));
    });
    await t.step("reload: the inspector still lists the verified deliveries", async (ok) => {
      tab("webhooks");
      await waitFor(() => $$("#deliveries tr.ok").some((tr) => tr.textContent.includes(state.runId)), "the run's deliveries");
      ok(true);
    });
  },

  /** Reset forgets everything (the driver waits for the reload it causes, then runs `emptied`). */
  async reset(t) {
    setTimeout(() => click("#playground-reset"), 50);
    t.ok("reset: the button is there", Boolean($("#playground-reset")));
  },

  async emptied(t, state) {
    await CHECKS.ready(t);
    tab("inbox");
    await t.step("reset: no run and no delivery is left", async (ok) => {
      await waitFor(() => $$("#agents li.agent").length === 4, "the agents");
      await sleep(500);
      ok(!text("#runs").includes(state.runId) && !$("#runs-empty").hidden && $$("#deliveries tr").length === 0, `${text("#runs")} / ${$$("#deliveries tr").length} deliveries`);
    });
  },

  /**
   * The playground's in-page `EventSource` (event-source.js) against this browser's own, on the same bytes: a stream
   * of the test's server cut at awkward places (a BOM; CR, LF and CRLF line ends split across chunks; comments, ids,
   * `retry`, event names, a field with no colon, a last event without its blank line), which ends, is reconnected
   * with `Last-Event-ID` and answers that. Runs in a page of that server (it serves the module and the stream).
   */
  async eventSource(t) {
    await t.step("event-source.js reads an event stream as this browser's EventSource does (events, ids, reconnection)", async (ok) => {
      const { pageEventSource } = await import(new URL("event-source.js", location.href).href);
      const PageEventSource = pageEventSource((url, init) => fetch(url, init), new URL("./", location.href));
      const read = (Source, key) => new Promise((resolve) => {
        const seen = [];
        const source = new Source(`stream?key=${key}`);
        let onmessage = 0;
        source.onmessage = () => onmessage++;
        const end = () => {
          source.close();
          seen.push(`onmessage ${onmessage}, readyState ${source.readyState}`);
          resolve(seen);
        };
        const timer = setTimeout(end, 8_000);
        for (const type of ["open", "error", "message", "delivery", "foo", "bar"]) {
          source.addEventListener(type, (e) => {
            seen.push(`${e.type} ${JSON.stringify(e.data ?? null)} id=${e.lastEventId ?? ""} readyState=${source.readyState}`);
            if (e.type === "bar") {
              clearTimeout(timer);
              end();
            }
          });
        }
      });
      const [native, page] = await Promise.all([read(EventSource, "native"), read(PageEventSource, "page")]);
      ok(JSON.stringify(native) === JSON.stringify(page) && native.length === 10, `${native.join("; ")} / ${page.join("; ")}`);
    });
  },

  /** Every request the page made stayed on its origin (resource timing covers fetch, EventSource, modules, wasm). */
  async offline(t) {
    const off = performance.getEntriesByType("resource").map((e) => e.name).filter((u) => /^(https?|wss?):/.test(u) && new URL(u).origin !== location.origin);
    t.ok("no request left the page's origin", off.length === 0, off.join(", "));
  },
};

/** Runs check `name` with the state of earlier ones; never rejects. */
export async function check(name, state = {}) {
  const t = new Tally();
  t.state = { ...state };
  try {
    await CHECKS[name](t, state);
  } catch (e) {
    t.ok(`${name} ran to its end`, false, e?.message ?? e);
  }
  return { lines: t.lines, passed: t.passed, failed: t.failed, state: t.state };
}
