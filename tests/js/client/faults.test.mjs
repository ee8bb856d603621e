// Fault injection through the emulator's control API: N creates under injected 429 / 503 / 500 / dropped connections
// (after the service committed) make exactly N runs, because every retry reuses the call's idempotency key.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadSdk, startEmulator, serveFiles, fetchSpy, rejectsWith, KEY } from "./harness.mjs";

const sdk = await loadSdk();
const stateFile = join(mkdtempSync(join(tmpdir(), "docauto-faults-")), "state.json");
let emu, docs;

before(async () => {
  emu = await startEmulator(["--state", stateFile]);
  docs = await serveFiles({ "/a.txt": { body: "Invoice 42. Total 99 EUR.", type: "text/plain" } });
});
after(async () => {
  await emu?.stop();
  await docs?.close();
  rmSync(dirname(stateFile), { recursive: true, force: true });
});

/** Agent runs the emulator holds (read from its persisted state). */
function storedRunCount() {
  // --state is a snapshot (stateFile) plus an append-only journal (stateFile + ".journal", one JSON object per line
  // with the changed entries, null for a removal): replay the journal over the snapshot, as the emulator's start does
  const state = JSON.parse(readFileSync(stateFile, "utf8"));
  const runs = new Set(Object.keys(state.agent_runs ?? {}));
  let journal = "";
  try {
    journal = readFileSync(`${stateFile}.journal`, "utf8");
  } catch {}
  for (const line of journal.split("\n")) {
    if (!line) continue;
    const rec = JSON.parse(line);
    if ((rec.lsn ?? 0) <= (state.journal_lsn ?? 0)) continue;
    for (const [id, run] of Object.entries(rec.agent_runs ?? {})) {
      if (run === null) runs.delete(id);
      else runs.add(id);
    }
  }
  return runs.size;
}

const N = 3;
const FAULTS = [
  { kind: "rate_limited", retryAfter: 1 },
  { kind: "auth_unavailable" },
  { kind: "internal_error" },
  { kind: "drop_connection" },
];

for (const fault of FAULTS) {
  test(`n_creates_under_${fault.kind}_make_exactly_n_runs`, async () => {
    const { spy, calls } = fetchSpy();
    const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: spy, logLevel: "off" });
    const initial = storedRunCount();
    const ids = [];
    for (let i = 0; i < N; i++) {
      await emu.control("POST", "/faults", fault);
      const { data, response } = await client.agentRuns
        .create({ agent: "agt_document_digest", files: [{ url: `${docs.url}/a.txt` }] }, { wait: 0 })
        .withResponse();
      ids.push(data.id);
      if (fault.kind === "drop_connection") assert.equal(response.idempotentReplay, true, "the retry must be a replay");
    }
    assert.equal(new Set(ids).size, N);
    assert.equal(storedRunCount() - initial, N);
    const creates = calls.filter((c) => c.method === "POST");
    assert.equal(creates.length, 2 * N, "one failed attempt and one retry per create");
    for (let i = 0; i < N; i++) {
      const [a, b] = [creates[2 * i], creates[2 * i + 1]];
      assert.ok(a.headers["idempotency-key"], "every POST carries an idempotency key");
      assert.equal(a.headers["idempotency-key"], b.headers["idempotency-key"], "a retry reuses the key");
    }
    assert.equal(new Set(creates.map((c) => c.headers["idempotency-key"])).size, N, "each call has its own key");
  });
}

test("retry_after_beyond_the_cap_is_thrown_with_retry_after", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, maxRetryAfterMs: 1000, logLevel: "off" });
  await emu.control("POST", "/faults", { kind: "rate_limited", retryAfter: 30 });
  const started = Date.now();
  const e = await rejectsWith(assert, client.agents.list(), sdk.RateLimitError, "rate_limited");
  assert.ok(Date.now() - started < 5000, "did not wait the 30 s");
  assert.equal(e.retryAfter, 30);
  assert.equal(e.status, 429);
  assert.equal(e.headers["retry-after"], "30");
});

test("retries_exhausted_surface_the_last_error", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, maxRetries: 1, logLevel: "off" });
  await emu.control("POST", "/faults", { kind: "auth_unavailable", count: 2 });
  const e = await rejectsWith(assert, client.agents.list(), sdk.InternalServerError, "auth_unavailable");
  assert.equal(e.status, 503);
  assert.equal(e.retryable, true);
  await emu.control("DELETE", "/faults");
});

test("slow_answer_beyond_timeout_is_api_timeout_error", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, maxRetries: 0, timeoutMs: 200, logLevel: "off" });
  await emu.control("POST", "/faults", { kind: "slow", delayMs: 1500 });
  const e = await rejectsWith(assert, client.agents.list(), sdk.APITimeoutError, "timeout");
  assert.ok(e instanceof sdk.APIConnectionError);
  assert.equal(e.status, undefined);
  await emu.control("DELETE", "/faults");
});

test("abort_signal_ends_a_slow_call_with_user_abort_error", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  await emu.control("POST", "/faults", { kind: "slow", delayMs: 2000 });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const started = Date.now();
  await rejectsWith(assert, client.agents.list({ signal: controller.signal }), sdk.APIUserAbortError, "aborted");
  assert.ok(Date.now() - started < 1500);
  await emu.control("DELETE", "/faults");
});

/** A `fetch` that answers after `delayMs` with a 200 whose body never ends; records each init and body cancel. */
function lateFetch(delayMs) {
  const seen = { inits: [], cancelled: 0 };
  seen.fetch = (url, init) => {
    seen.inits.push(init);
    return new Promise((resolve) =>
      setTimeout(() => {
        const body = new ReadableStream({
          pull() {
            return new Promise(() => {});
          },
          cancel() {
            seen.cancelled += 1;
          },
        });
        resolve(new Response(body, { status: 200, headers: { "content-type": "application/json" } }));
      }, delayMs),
    );
  };
  return seen;
}

test("without_a_signal_a_timed_out_attempt_is_aborted_and_its_late_answer_released", async () => {
  const once = lateFetch(400);
  const quick = new sdk.DocAuto({
    apiKey: KEY, baseUrl: "http://127.0.0.1:9", fetch: once.fetch, maxRetries: 0, timeoutMs: 40, logLevel: "off",
  });
  const started = Date.now();
  await rejectsWith(assert, quick.agents.list(), sdk.APITimeoutError, "timeout");
  assert.ok(Date.now() - started < 350, "the timeout fired on time, not when the answer came");

  const late = lateFetch(150);
  const client = new sdk.DocAuto({
    apiKey: KEY, baseUrl: "http://127.0.0.1:9", fetch: late.fetch, maxRetries: 1, timeoutMs: 40, logLevel: "off",
  });
  await rejectsWith(assert, client.agents.list(), sdk.APITimeoutError, "timeout");
  assert.equal(late.inits.length, 2, "the timed-out attempt was retried");
  // Every attempt runs under its own signal, which the timer aborts before the resend (one attempt in flight).
  assert.ok(late.inits.every((init) => init.signal && init.signal.aborted), "each timed-out attempt was aborted");
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(late.cancelled, 2, "each late answer's body was cancelled, closing its connection");
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(once.cancelled, 1);
});

test("with_a_signal_a_timed_out_attempt_is_aborted", async () => {
  const late = lateFetch(150);
  const client = new sdk.DocAuto({
    apiKey: KEY, baseUrl: "http://127.0.0.1:9", fetch: late.fetch, maxRetries: 0, timeoutMs: 40, logLevel: "off",
  });
  const caller = new AbortController();
  await rejectsWith(assert, client.agents.list({ signal: caller.signal }), sdk.APITimeoutError, "timeout");
  assert.equal(late.inits.length, 1);
  const signal = late.inits[0].signal;
  assert.ok(signal && signal !== caller.signal, "the attempt ran under its own signal");
  assert.equal(signal.aborted, true, "the timer aborted the request");
  assert.equal(caller.signal.aborted, false, "the caller's signal is left alone");
});

test("every_attempt_is_sent_under_a_signal_no_other_attempt_had_and_only_timed_out_ones_are_aborted", async () => {
  // Node's controllers are made ahead, in the batch that frees finished calls (promise.js, `freshController`): none
  // may be handed out twice, nor after its timer fired. Sequential calls (with turns between them for that batch),
  // timed-out attempts, then a burst of concurrent calls larger than the spares.
  const sent = [];
  let hang = 0;
  const fetchFn = (url, init) => {
    sent.push({ signal: init.signal, abortedWhenSent: init.signal?.aborted, timedOut: hang > 0 });
    if (hang > 0) {
      hang -= 1;
      return new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    }
    return Promise.resolve(Response.json({ object: "list", data: [], has_more: false, cursor: null }));
  };
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: "http://127.0.0.1:9", fetch: fetchFn, maxRetries: 1, timeoutMs: 30, logLevel: "off" });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  for (let i = 0; i < 3; i++) {
    await client.agents.list();
    await turn();
  }
  hang = 2;
  await rejectsWith(assert, client.agents.list(), sdk.APITimeoutError, "timeout");
  await turn();
  await Promise.all(Array.from({ length: 10 }, () => client.agents.list()));
  await turn();
  for (let i = 0; i < 3; i++) {
    await client.agents.list();
    await turn();
  }
  assert.equal(sent.length, 18);
  assert.equal(new Set(sent.map((s) => s.signal)).size, sent.length, "no signal went to two attempts");
  assert.ok(sent.every((s) => s.signal instanceof AbortSignal && s.abortedWhenSent === false), "each was live when sent");
  assert.deepEqual(
    sent.map((s) => s.signal.aborted),
    sent.map((s) => s.timedOut),
    "the two timed-out attempts' signals were aborted, and no other",
  );
});

test("shared_deadline_timer_rearms_for_an_earlier_deadline", async () => {
  const hang = () => new Promise(() => {});
  const slow = new sdk.DocAuto({ apiKey: KEY, baseUrl: "http://127.0.0.1:9", fetch: hang, maxRetries: 0, timeoutMs: 60_000, logLevel: "off" });
  const quick = new sdk.DocAuto({ apiKey: KEY, baseUrl: "http://127.0.0.1:9", fetch: hang, maxRetries: 0, timeoutMs: 80, logLevel: "off" });
  const controller = new AbortController();
  const pending = slow.agents.list({ signal: controller.signal }).catch((e) => e);
  const started = Date.now();
  await rejectsWith(assert, quick.agents.list(), sdk.APITimeoutError, "timeout");
  assert.ok(Date.now() - started < 1000, "the later 60 s deadline did not delay the 80 ms one");
  controller.abort();
  assert.ok((await pending) instanceof sdk.APIUserAbortError);
});

/** Runs `code` (an ES module body with `sdk` in scope) in a child Node process; resolves to its exit and output. */
async function inChild(code) {
  const { spawn } = await import("node:child_process");
  const { pathToFileURL } = await import("node:url");
  const { ROOT } = await import("./harness.mjs");
  const entry = pathToFileURL(join(ROOT, "pkg", "node.js")).href;
  const child = spawn(process.execPath, ["--input-type=module", "-e", `import * as sdk from ${JSON.stringify(entry)};\n${code}`], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (out += c));
  const started = Date.now();
  const code_ = await new Promise((resolve) => child.on("exit", resolve));
  return { code: code_, out, ms: Date.now() - started };
}

test("a_finished_call_leaves_no_timer_holding_the_process_open", async () => {
  const r = await inChild(`
    const client = new sdk.DocAuto({ apiKey: "sk_test_x", baseUrl: "https://api.example.com", logLevel: "off",
      fetch: async () => new Response("{}", { status: 200, headers: { "content-type": "application/json" } }) });
    await client.agents.list();
    console.log("done");
  `);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /done/);
  assert.ok(r.ms < 5000, `the process exited after ${r.ms} ms (a 10 min deadline timer would hold it)`);
});

test("a_pending_deadline_holds_the_process_open_until_it_fires", async () => {
  const r = await inChild(`
    const client = new sdk.DocAuto({ apiKey: "sk_test_x", baseUrl: "https://api.example.com", logLevel: "off",
      maxRetries: 0, timeoutMs: 300, fetch: () => new Promise(() => {}) });
    try { await client.agents.list(); } catch (e) { console.log(e.code); }
  `);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /timeout/, "the timeout fired instead of the process exiting with the call unsettled");
});
