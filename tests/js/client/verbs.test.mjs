// End to end against the emulator: the capability verbs, capability runs (pages, waits, outputs, cancel, delete,
// keep), saved configs and the action catalog.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadSdk, startEmulator, serveFiles, fetchSpy, rejectsWith, KEY } from "./harness.mjs";

const sdk = await loadSdk();
const INVOICE = "Invoice number: INV-42\nCustomer Name: Jane Smith\nEmail: jane@example.com\nTotal: 1200 EUR\n";
let emu, docs, client, file;

before(async () => {
  emu = await startEmulator();
  docs = await serveFiles({ "/invoice.txt": { body: INVOICE, type: "text/plain" } });
  client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  file = { url: `${docs.url}/invoice.txt` };
});
after(async () => {
  await emu?.stop();
  await docs?.close();
});

const SCHEMA = { type: "object", properties: { total: { type: "string" }, customer: { type: "string" } } };

test("extract_with_citations_grounds_each_value_in_the_document", async () => {
  const run = await client.extract({ file, schema: SCHEMA, citations: true, metadata: { batch: "b1" } }, { wait: 60 });
  assert.equal(run.object, "extract_run");
  assert.match(run.id, /^exr_/);
  const done = run.status === "processed" ? run : await client.runs.waitFor(run.id);
  assert.equal(done.status, "processed");
  const cites = done.output.citations;
  assert.ok(cites.total.length >= 1);
  const c = cites.total[0];
  assert.match(c.text, /1200/);
  assert.equal(c.page, 0);
  for (const k of ["x", "y", "width", "height"]) assert.ok(c.bbox[k] >= 0 && c.bbox[k] <= 1);
  assert.ok(c.confidence >= 0 && c.confidence <= 5);
  assert.equal(done.output.documents.length, 1);
  assert.deepEqual(done.config.schema, SCHEMA);
});

test("verb_validation_rows_are_refused_before_sending", async () => {
  let sent = 0;
  const c = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: (u, i) => (sent++, fetch(u, i)) });
  await rejectsWith(assert, c.extract({ file, files: [file] }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.extract({ file, schema: SCHEMA, action: "a" }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.extract({ file, hints: "totals", action: "a" }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.extract({ file, schema: { type: "object", properties: { a: { $ref: "#/b" } } } }), sdk.BadRequestError, "invalid_schema");
  await rejectsWith(assert, c.extract({ files: Array.from({ length: 101 }, () => file) }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.extractBatch({ action: "a", files: [file], schema: SCHEMA }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.fill({ template: { id: "file_t" }, values: {}, files: [file] }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.sign({ file, signers: [] }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.pipeline({ files: [file], steps: [] }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.pipeline({ file, steps: [{ parse: {} }] }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.runs.list({ limit: 0 }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.runs.keep("exr_1", { spaceId: "s", space: "n" }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.configs.create("extract", { name: "x", config: { schema: { type: "array" } } }), sdk.BadRequestError, "invalid_schema");
  assert.equal(sent, 0);
});

test("parse_redact_fill_sign_pipeline_start_runs", async () => {
  const parsed = await client.parse({ file }, { wait: 60 });
  assert.match(parsed.id, /^par_/);
  const redacted = await client.redact({ file, categories: ["email", "name"] }, { wait: 60 });
  assert.match(redacted.id, /^rdr_/);
  const uploaded = await client.files.upload({ name: "form.txt", mimeType: "text/plain", data: "Name: ____\nTotal: ____\n" });
  const filled = await client.fill({ template: { id: uploaded.id }, values: { Name: "Ada", Total: "12" } }, { wait: 60 });
  assert.match(filled.id, /^flr_/);
  const signed = await client.sign({ file, signers: [{ name: "Ada", email: "ada@example.com" }] });
  assert.match(signed.id, /^sgr_/);
  assert.equal(signed.status, "needs_input");
  const settled = await client.runs.waitFor(signed.id, { until: "settled" });
  assert.equal(settled.status, "needs_input");
  const piped = await client.pipeline({ files: [file], steps: [{ parse: {} }, { extract: { schema: SCHEMA } }] }, { wait: 60 });
  assert.match(piped.id, /^plr_/);
});

test("runs_list_pages_and_for_await_visits_every_run_once", async () => {
  for (let i = 0; i < 5; i++) await client.parse({ file, metadata: { page_test: "yes" } }, { wait: 60 });
  const first = await client.runs.list({ limit: 2, metadata: { page_test: "yes" } });
  assert.equal(first.data.length, 2);
  assert.equal(first.hasMore, true);
  assert.ok(first.cursor);
  const second = await first.nextPage();
  assert.equal(second.data.length, 2);
  const ids = [];
  for await (const run of client.runs.list({ limit: 2, metadata: { page_test: "yes" } })) ids.push(run.id);
  assert.equal(ids.length, 5);
  assert.equal(new Set(ids).size, 5);
  const fromPage = [];
  for await (const run of first) fromPage.push(run.id);
  assert.deepEqual(fromPage, ids);
});

test("output_url_and_download_output_fetch_the_bytes_without_the_key", async () => {
  const run = await client.redact({ file, categories: ["email", "name"] }, { wait: 60 });
  const done = await client.runs.waitFor(run.id);
  const name = done.output.file.name;
  const { spy, calls } = fetchSpy();
  const c = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: spy, logLevel: "off" });
  const url = await c.runs.outputUrl(run.id, name);
  assert.match(url, /\/downloads\//);
  const bytes = await c.runs.downloadOutput(run.id, name);
  const text = new TextDecoder().decode(bytes);
  assert.ok(text.includes("Total: 1200 EUR"));
  assert.ok(!text.includes("jane@example.com"), "the email was redacted");
  const download = calls.find((x) => x.url.includes("/downloads/"));
  assert.equal(download.headers.authorization, undefined, "the signed download carries no key");
  await rejectsWith(assert, c.runs.outputUrl(run.id, "nope.txt"), sdk.NotFoundError, "not_found");
});

test("cancel_delete_and_keep", async () => {
  const run = await client.parse({ file }, { wait: 0 });
  const read = await client.runs.retrieve(run.id, { wait: 0 });
  assert.equal(read.id, run.id);
  const settled = await client.runs.retrieve(run.id, { wait: 0 });
  const cancelled = await client.runs.cancel(run.id).catch((e) => e);
  // A run still working is cancelled; one that already finished answers 409. Which one it is was read just before.
  if (["queued", "processing"].includes(settled.status) && !(cancelled instanceof sdk.ConflictError)) {
    assert.ok(!(cancelled instanceof Error), String(cancelled));
    assert.equal(cancelled.status, "cancelled");
    assert.equal((await client.runs.retrieve(run.id, { wait: 0 })).status, "cancelled", "the cancel took");
  } else {
    assert.ok(cancelled instanceof sdk.ConflictError, String(cancelled));
    const after = (await client.runs.retrieve(run.id, { wait: 0 })).status;
    if (["queued", "processing"].includes(settled.status)) {
      // Still working when read, finished when the cancel arrived (409): left as it finished, never cancelled.
      assert.ok(!["queued", "processing", "cancelled"].includes(after), `a run that finished first is ${after}`);
    } else {
      assert.equal(after, settled.status, "a finished run is left as it was");
    }
  }
  const kept = await client.extract({ file, schema: SCHEMA }, { wait: 60 });
  const processed = await client.runs.waitFor(kept.id);
  assert.equal(processed.status, "processed");
  const keep = await client.runs.keep(kept.id, { space: "Invoices" });
  assert.ok(keep && typeof keep === "object" && !Array.isArray(keep));
  // Spec: 409 `already_kept` when the run is kept in another space.
  await rejectsWith(assert, client.runs.keep(kept.id, { space: "Another space" }), sdk.ConflictError, "already_kept");
  const del = await client.runs.delete(run.id).withResponse();
  assert.equal(del.data, undefined);
  assert.equal(del.response.status, 204);
  await client.runs.delete(run.id);
  await rejectsWith(assert, client.runs.retrieve(run.id), sdk.APIError);
});

test("configs_and_action_catalog", async () => {
  const saved = await client.configs.create("extract", { name: "Invoices", config: { schema: SCHEMA } });
  assert.ok(saved.id);
  const run = await client.extract({ file, action: saved.id }, { wait: 60 });
  assert.match(run.id, /^exr_/);
  const legacy = await client.actions.create({ capability: "redact", name: "PII", config: { categories: ["email"] } });
  assert.ok(legacy.id);
  const catalog = await client.actions.catalog();
  assert.ok(Array.isArray(catalog.data) && catalog.data.length > 0);
  const batch = await client.extractBatch({ action: saved.id, files: [file, file] });
  assert.match(batch.id, /^exr_|^exb_|^bat/);
});

test("realtime_create_session_returns_a_ticketed_socket_url", async () => {
  const lines = [];
  const logger = { debug: (l) => lines.push(l), info: (l) => lines.push(l), warn: (l) => lines.push(l), error: (l) => lines.push(l) };
  const c = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "debug", logger });
  const session = await c.realtime.createSession({ finalPass: true, sampleRate: 16000 });
  assert.match(session.id, /^rts_/);
  const url = new URL(session.url);
  assert.ok(["ws:", "wss:"].includes(url.protocol));
  const ticket = url.searchParams.get("ticket");
  assert.ok(ticket);
  assert.ok(!lines.join("\n").includes(ticket), "the ticket is never logged");
});
