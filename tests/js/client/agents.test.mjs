// End to end against the emulator: agents and the agent-run lifecycle through the SDK.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadSdk, startEmulator, serveFiles, rejectsWith, KEY } from "./harness.mjs";

const sdk = await loadSdk();
let emu, docs, client;

before(async () => {
  emu = await startEmulator();
  docs = await serveFiles({ "/contract.txt": { body: "Contract between A and B. Total: 1200 EUR.", type: "text/plain" } });
  client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
});
after(async () => {
  await emu?.stop();
  await docs?.close();
});

const start = (agent = "agt_contract_review") =>
  client.agentRuns.create({ agent, files: [{ url: `${docs.url}/contract.txt` }], metadata: { ref: "t1" } }, { wait: 0 });

test("agents_list_and_retrieve_return_the_saved_automations", async () => {
  const list = await client.agents.list();
  assert.equal(list.object, "list");
  const ids = list.data.map((a) => a.id);
  assert.ok(ids.includes("agt_contract_review"));
  const agent = await client.agents.retrieve("agt_contract_review");
  assert.equal(agent.object, "agent");
  assert.equal(agent.version, 3);
  assert.deepEqual(agent.tasks.map((t) => t.id), ["read_contract", "legal_review", "send_to_counterparty"]);
});

test("unknown_agent_is_not_found_error_with_request_id", async () => {
  const e = await rejectsWith(assert, client.agents.retrieve("agt_nope"), sdk.NotFoundError, "not_found");
  assert.equal(e.status, 404);
  assert.ok(e instanceof sdk.APIError && e instanceof Error);
  assert.match(e.requestId, /^req_/);
  assert.equal(e.retryable, false);
});

test("agent_run_lifecycle_task_then_approval_then_completed", async () => {
  const created = await start();
  assert.equal(created.object, "agent_run");
  assert.match(created.id, /^agr_/);
  assert.deepEqual(created.metadata, { ref: "t1" });

  let run = await client.agentRuns.waitFor(created.id, { until: "settled" });
  assert.equal(run.status, "waiting");
  assert.equal(run.waiting.tasks, 1);
  const task = run.tasks.find((t) => t.status === "ready");
  assert.equal(task.executor, "human");

  const done = await client.agentRuns.completeTask(created.id, task.id, { note: "clauses fine" });
  assert.equal(done.object, "agent_run_task");
  assert.equal(done.status, "completed");
  assert.equal(done.summary, "clauses fine");

  run = await client.agentRuns.waitFor(created.id, { until: "settled" });
  assert.equal(run.status, "waiting");
  assert.equal(run.approvals.length, 1);
  const approval = run.approvals[0];
  assert.equal(approval.kind, "before");

  const decision = await client.agentRuns.approve(created.id, approval.id, { note: "go" });
  assert.equal(decision.object, "agent_run_approval");
  assert.equal(decision.status, "approved");
  assert.equal(decision.note, "go");
  assert.equal(decision.run.id, created.id);

  run = await client.agentRuns.waitFor(created.id, { until: "finished" });
  assert.equal(run.status, "completed");
  assert.equal(run.progress.tasks.completed, 3);
  const again = await client.agentRuns.retrieve(created.id, { wait: 0 });
  assert.equal(again.status, "completed");
});

test("reject_with_note_records_the_decision", async () => {
  const created = await start();
  let run = await client.agentRuns.waitFor(created.id, { until: "settled" });
  await client.agentRuns.completeTask(created.id, run.tasks.find((t) => t.status === "ready").id);
  run = await client.agentRuns.waitFor(created.id, { until: "settled" });
  const decision = await client.agentRuns.reject(created.id, run.approvals[0].id, { note: "wrong recipient" });
  assert.equal(decision.object, "agent_run_approval");
  assert.equal(decision.note, "wrong recipient");
  assert.notEqual(decision.status, "approved");
  const finished = await client.agentRuns.waitFor(created.id);
  assert.ok(["completed", "failed", "cancelled"].includes(finished.status), finished.status);
});

test("reject_without_note_is_refused_before_sending", async () => {
  let sent = 0;
  const counting = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: (u, i) => (sent++, fetch(u, i)) });
  const e = await rejectsWith(assert, counting.agentRuns.reject("agr_1", "apr_1", { note: " " }), sdk.BadRequestError, "invalid_request");
  assert.match(e.message, /note/);
  assert.equal(e.status, 400);
  assert.equal(sent, 0);
});

test("create_validation_rows_are_refused_before_sending", async () => {
  let sent = 0;
  const c = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: (u, i) => (sent++, fetch(u, i)) });
  await rejectsWith(assert, c.agentRuns.create({ agent: "agt_contract_review", files: [] }), sdk.BadRequestError, "invalid_request");
  const many = Array.from({ length: 201 }, (_, i) => ({ id: `file_${i}` }));
  await rejectsWith(assert, c.agentRuns.create({ agent: "a", files: many }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(
    assert,
    c.agentRuns.create({ agent: "a", files: [{ id: "f" }], metadata: { big: "x".repeat(10_300) } }),
    sdk.BadRequestError,
    "invalid_request",
  );
  await rejectsWith(assert, c.agentRuns.approve("agr_1", "apr_1", { note: "x".repeat(4001) }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(
    assert,
    c.agentRuns.completeTask("agr_1", "t", { files: Array.from({ length: 21 }, (_, i) => `f${i}`) }),
    sdk.BadRequestError,
    "invalid_request",
  );
  await rejectsWith(assert, c.agentRuns.retrieve("agr_1", { wait: 121 }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, c.agentRuns.waitFor("agr_1", { until: "soon" }), sdk.BadRequestError, "invalid_request");
  assert.equal(sent, 0);
});

test("service_error_rows_map_to_their_classes", async () => {
  await rejectsWith(assert, client.agentRuns.retrieve("agr_missing"), sdk.NotFoundError, "not_found");
  const unknownAgent = client.agentRuns.create({ agent: "agt_nope", files: [{ url: `${docs.url}/contract.txt` }] });
  const e = await rejectsWith(assert, unknownAgent, sdk.APIError);
  assert.ok([400, 404, 422].includes(e.status), `status ${e.status}`);
  const created = await start();
  const settled = await client.agentRuns.waitFor(created.id, { until: "settled" });
  await rejectsWith(assert, client.agentRuns.approve(created.id, "apr_missing"), sdk.NotFoundError);
  assert.equal(settled.status, "waiting");
  // Completing an agent-executed step: 422; a step already done: 409; a second decision on an approval: 409.
  await rejectsWith(assert, client.agentRuns.completeTask(created.id, "read_contract"), sdk.UnprocessableEntityError);
  await client.agentRuns.completeTask(created.id, "legal_review");
  await rejectsWith(assert, client.agentRuns.completeTask(created.id, "legal_review"), sdk.ConflictError);
  const blocked = await client.agentRuns.waitFor(created.id, { until: "settled" });
  const approvalId = blocked.approvals[0].id;
  await client.agentRuns.approve(created.id, approvalId);
  await rejectsWith(assert, client.agentRuns.approve(created.id, approvalId), sdk.ConflictError);
  const bad = new sdk.DocAuto({ apiKey: "sk_wrong_key", baseUrl: emu.baseUrl, maxRetries: 0, logLevel: "off" });
  const auth = await rejectsWith(assert, bad.agents.list(), sdk.AuthenticationError);
  assert.equal(auth.status, 401);
});

test("with_response_gives_status_headers_request_id_and_replay", async () => {
  const key = `idem-${Date.now()}`;
  const params = { agent: "agt_document_digest", files: [{ url: `${docs.url}/contract.txt` }] };
  const first = await client.agentRuns.create(params, { idempotencyKey: key, wait: 0 }).withResponse();
  assert.ok([200, 201, 202].includes(first.response.status));
  assert.match(first.response.requestId, /^req_/);
  assert.equal(first.response.headers["x-request-id"], first.response.requestId);
  assert.equal(first.response.idempotentReplay, false);
  const second = await client.agentRuns.create(params, { idempotencyKey: key, wait: 0 }).withResponse();
  assert.equal(second.data.id, first.data.id);
  assert.equal(second.response.idempotentReplay, true);
});
