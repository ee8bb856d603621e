// The client's rules against a scripted server (plain `node:http`, not the emulator, which shares our assumptions):
// it drops the connection after reading a request, answers late, redirects to a second origin, answers polls at
// once. The spec is the oracle for what may be resent: "Idempotency: header `idempotency-key` on writes makes a
// retry return the original run; extract batch ignores it" (only run creations are deduped).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { gzipSync } from "node:zlib";
import { once } from "node:events";
import { loadSdk, KEY, wasmMemoryBytes } from "./harness.mjs";

const sdk = await loadSdk();
const servers = [];
after(async () => {
  for (const s of servers) await s.close();
});

/**
 * A scripted server: `script(req, res, n, body)` handles the n-th request (0-based) after its body was read.
 * Resolves to `{ url, requests, close() }`; `requests` records method, url, headers and body text of each request.
 */
async function scripted(script) {
  const requests = [];
  const sockets = new Set();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const n = requests.length;
      const entry = { method: req.method, url: req.url, headers: req.headers, body, closed: false, openBefore: 0 };
      // How many earlier requests still had their connection open when this one arrived.
      entry.openBefore = requests.filter((r) => !r.closed).length;
      req.socket.once("close", () => {
        entry.closed = true;
      });
      requests.push(entry);
      script(req, res, n, body);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  const handle = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  servers.push(handle);
  return handle;
}

/** Reads the request, then closes the connection without an answer: the write may have been applied. */
const drop = (req) => req.socket.destroy();
const json = (res, status, body, headers = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
};

function client(url, options = {}) {
  return new sdk.DocAuto({ apiKey: KEY, baseUrl: url, logLevel: "off", ...options });
}

/** A port nothing listens on (a server bound, then closed). */
async function closedPort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

// 1. Retry classes.

const NOT_REPLAY_SAFE = [
  ["webhooks.create", (c) => c.webhooks.create({ url: "https://hooks.example.com/x" })],
  ["files.create", (c) => c.files.create({ url: "https://files.example.com/a.pdf" })],
  ["configs.create", (c) => c.configs.create("extract", { name: "n", config: {} })],
  ["realtime.createSession", (c) => c.realtime.createSession({})],
  ["extract.batch", (c) => c.extractBatch({ action: "act", files: [{ id: "file_1" }] })],
];

for (const [name, call] of NOT_REPLAY_SAFE) {
  test(`${name}_whose_answer_is_lost_is_sent_once_and_rejects_with_outcome_unknown`, async () => {
    const server = await scripted(drop);
    const error = await call(client(server.url)).then(
      () => assert.fail("resolved"),
      (e) => e,
    );
    // The rule first: a write the service does not dedupe is not sent again; then how the caller learns of it.
    assert.equal(server.requests.length, 1, "a write the service does not dedupe is not sent again");
    assert.ok(error instanceof sdk.APIConnectionError, `${error?.name}: ${error?.message}`);
    assert.equal(error.outcomeUnknown, true);
    assert.equal(error.retryable, false);
  });
}

test("webhooks_create_that_times_out_is_sent_once_and_rejects_with_outcome_unknown", async () => {
  const server = await scripted(() => {}); // reads, never answers
  const error = await client(server.url, { timeoutMs: 300 })
    .webhooks.create({ url: "https://hooks.example.com/x" })
    .then(() => assert.fail("resolved"), (e) => e);
  await new Promise((r) => setTimeout(r, 800));
  assert.equal(server.requests.length, 1, "a timed-out write the service does not dedupe is not sent again");
  assert.ok(error instanceof sdk.APITimeoutError, `${error?.name}: ${error?.message}`);
  assert.equal(error.outcomeUnknown, true);
});

test("agent_run_create_whose_answer_is_lost_is_resent_with_the_same_key", async () => {
  const server = await scripted((req, res, n) => {
    if (n === 0) return drop(req);
    json(res, 202, { id: "agr_1", object: "agent_run", status: "queued" }, { "idempotent-replay": "true" });
  });
  const { data, response } = await client(server.url)
    .agentRuns.create({ agent: "agt_1", files: [{ id: "file_1" }] }, { wait: 0 })
    .withResponse();
  assert.equal(data.id, "agr_1");
  assert.equal(response.idempotentReplay, true);
  assert.equal(server.requests.length, 2);
  const [a, b] = server.requests.map((r) => r.headers["idempotency-key"]);
  assert.ok(a);
  assert.equal(a, b);
});

test("a_write_is_resent_when_the_connection_was_refused", async () => {
  const port = await closedPort();
  let calls = 0;
  const counting = (url, init) => {
    calls += 1;
    return fetch(url, init);
  };
  const error = await client(`http://127.0.0.1:${port}`, { fetch: counting, maxRetries: 1 })
    .webhooks.create({ url: "https://hooks.example.com/x" })
    .then(() => assert.fail("resolved"), (e) => e);
  assert.ok(error instanceof sdk.APIConnectionError, `${error?.name}: ${error?.message}`);
  assert.equal(error.outcomeUnknown, false, "refused: nothing was sent");
  assert.equal(error.retryable, true);
  assert.equal(calls, 2, "refused before sending: resent");
});

test("a_write_is_resent_after_429_and_auth_unavailable_but_not_after_a_bare_503", async () => {
  const server = await scripted((req, res, n) => {
    if (n === 0) return json(res, 429, { code: "rate_limited", retryable: true }, { "retry-after": "0" });
    if (n === 1) return json(res, 503, { code: "auth_unavailable", message: "x" });
    if (n === 2) return json(res, 201, { id: "wh_1", url: "https://hooks.example.com/x" });
    res.writeHead(503, { "content-type": "text/html" });
    res.end("<html>upstream</html>");
  });
  const c = client(server.url, { maxRetries: 3 });
  const created = await c.webhooks.create({ url: "https://hooks.example.com/x" });
  assert.equal(created.id, "wh_1");
  assert.equal(server.requests.length, 3);
  await assert.rejects(c.webhooks.create({ url: "https://hooks.example.com/x" }), sdk.InternalServerError);
  assert.equal(server.requests.length, 4, "a bare 503 may follow a commit: not resent");
});

test("delete_and_patch_are_resent_after_a_lost_answer", async () => {
  const server = await scripted((req, res, n) => {
    if (n % 2 === 0) return drop(req);
    if (req.method === "DELETE") {
      res.writeHead(204);
      res.end();
      return;
    }
    json(res, 200, { id: "wh_1", url: "https://hooks.example.com/y" });
  });
  const c = client(server.url);
  await c.webhooks.delete("wh_1");
  await c.webhooks.update("wh_1", { url: "https://hooks.example.com/y" });
  assert.deepEqual(
    server.requests.map((r) => r.method),
    ["DELETE", "DELETE", "PATCH", "PATCH"],
  );
});

// 2. Approvals and human steps: a resend cannot apply a second decision (spec: "a second decision on the same approval
// gives 409 and the first answer stands"), so they are resent; a 409 after a lost answer is outcome unknown.

test("approve_whose_answer_is_lost_then_409_rejects_with_outcome_unknown_not_conflict", async () => {
  const server = await scripted((req, res, n) => {
    if (n === 0) return drop(req);
    json(res, 409, { code: "conflict", message: "approval already decided", retryable: false });
  });
  const error = await client(server.url)
    .agentRuns.approve("agr_1", "apr_1", { note: "ok" })
    .then(() => assert.fail("resolved"), (e) => e);
  assert.ok(!(error instanceof sdk.ConflictError), `${error?.name}: ${error?.message}`);
  assert.ok(error instanceof sdk.APIConnectionError, `${error?.name}`);
  assert.equal(error.outcomeUnknown, true);
  assert.equal(server.requests.length, 2);
});

test("complete_task_whose_answer_is_lost_is_resent_and_resolves", async () => {
  const server = await scripted((req, res, n) => {
    if (n === 0) return drop(req);
    json(res, 200, { id: "tsk_1", status: "completed", run: { id: "agr_1", status: "processing" } });
  });
  const task = await client(server.url).agentRuns.completeTask("agr_1", "tsk_1", { note: "done" });
  assert.equal(task.status, "completed");
  assert.equal(server.requests.length, 2);
});

test("approve_answered_409_without_a_lost_answer_is_a_conflict", async () => {
  const server = await scripted((req, res) => json(res, 409, { code: "conflict", message: "decided", retryable: false }));
  await assert.rejects(client(server.url).agentRuns.approve("agr_1", "apr_1", {}), sdk.ConflictError);
  assert.equal(server.requests.length, 1);
});

// 4. Redirects: API routes use `redirect: "manual"`; the call follows a same-origin 3xx itself and refuses another
// origin, so nothing (default headers, idempotency key, body, Authorization) reaches it.

for (const status of [301, 302, 303, 307, 308]) {
  test(`a_${status}_to_another_origin_is_refused_and_nothing_reaches_it`, async () => {
    const other = await scripted((req, res) => json(res, 200, { id: "stolen" }));
    const api = await scripted((req, res) => {
      res.writeHead(status, { location: `${other.url}/v1/webhooks` });
      res.end();
    });
    const c = client(api.url, { defaultHeaders: { "x-tenant": "t_secret" } });
    for (const call of [
      () => c.webhooks.create({ url: "https://hooks.example.com/x" }, { idempotencyKey: "idem_secret" }),
      () => c.runs.retrieve("exr_1"),
    ]) {
      const error = await call().then(() => assert.fail("resolved"), (e) => e);
      assert.ok(error instanceof sdk.APIError, `${error?.name}: ${error?.message}`);
      assert.equal(error.code, "redirect_refused");
      assert.equal(error.status, status);
    }
    assert.equal(other.requests.length, 0, "nothing reached the other origin");
    assert.equal(api.requests.length, 2, "not retried");
  });
}

test("a_same_origin_307_is_followed_with_the_same_headers_and_body", async () => {
  const api = await scripted((req, res, n) => {
    if (n === 0) {
      res.writeHead(307, { location: "/v1/webhooks-moved" });
      res.end();
      return;
    }
    json(res, 201, { id: "wh_1", url: "https://hooks.example.com/x" });
  });
  const created = await client(api.url, { defaultHeaders: { "x-tenant": "t_1" } }).webhooks.create({
    url: "https://hooks.example.com/x",
  });
  assert.equal(created.id, "wh_1");
  assert.equal(api.requests.length, 2);
  const [a, b] = api.requests;
  assert.equal(b.url, "/v1/webhooks-moved");
  assert.equal(b.method, "POST");
  assert.equal(b.body, a.body);
  for (const name of ["authorization", "idempotency-key", "x-tenant", "content-type"]) {
    assert.ok(a.headers[name], name);
    assert.equal(b.headers[name], a.headers[name], name);
  }
});

// 6. Polling that cannot run hot: a server that answers a `wait=120` poll at once with a status the service holds for.

test("wait_for_against_early_answers_keeps_a_floor_and_honours_the_deadline", async () => {
  const server = await scripted((req, res) => json(res, 200, { id: "exr_1", object: "run", status: "processing" }));
  const started = Date.now();
  const error = await client(server.url)
    .runs.waitFor("exr_1", { deadlineMs: 3_000 })
    .then(() => assert.fail("resolved"), (e) => e);
  const took = Date.now() - started;
  assert.ok(error instanceof sdk.APITimeoutError, `${error?.name}: ${error?.message}`);
  assert.equal(error.code, "wait_deadline");
  assert.ok(server.requests.length >= 2 && server.requests.length <= 3, `${server.requests.length} requests in 3 s`);
  assert.ok(server.requests.every((r) => r.url.includes("wait=")), "long polls");
  assert.ok(took < 3_500, `the deadline holds (${took} ms)`);
});

test("wait_for_honours_retry_after_on_a_poll_answer", async () => {
  const server = await scripted((req, res, n) =>
    json(res, 200, { id: "agr_1", object: "agent_run", status: n < 1 ? "processing" : "completed" }, { "retry-after": "2" }),
  );
  const started = Date.now();
  const run = await client(server.url).agentRuns.waitFor("agr_1");
  assert.equal(run.status, "completed");
  assert.equal(server.requests.length, 2);
  assert.ok(Date.now() - started >= 1_900, "waited the Retry-After");
});

test("wait_options_reject_a_bad_deadline", async () => {
  const c = client("http://127.0.0.1:9");
  for (const deadlineMs of [0, -1, 1.5, "10", Infinity]) {
    await assert.rejects(c.runs.waitFor("exr_1", { deadlineMs }), (e) => e instanceof sdk.BadRequestError && e.code === "invalid_request");
  }
});

// 3. One attempt in flight: a timed-out attempt is aborted (its connection closed) before the resend, with or without
// a caller's signal.

for (const withSignal of [false, true]) {
  test(`a_timed_out_attempt_is_closed_before_its_resend_${withSignal ? "with" : "without"}_a_signal`, async () => {
    const server = await scripted(() => {}); // reads, never answers
    const options = withSignal ? { signal: new AbortController().signal } : {};
    const error = await client(server.url, { timeoutMs: 300, maxRetries: 1 })
      .agentRuns.create({ agent: "agt_1", files: [{ id: "file_1" }] }, { wait: 0, ...options })
      .then(() => assert.fail("resolved"), (e) => e);
    assert.ok(error instanceof sdk.APITimeoutError, `${error?.name}: ${error?.message}`);
    assert.equal(server.requests.length, 2, "a run creation is resent after a timeout");
    assert.equal(server.requests[1].openBefore, 0, "the first attempt's connection was closed before the resend");
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(server.requests.every((r) => r.closed), "no attempt left running");
  });
}

// 5. Bodies as the caller wrote them: the sent text, not a parsed object, is compared.

test("an_extract_body_is_sent_in_the_callers_key_order_byte_for_byte", async () => {
  const server = await scripted((req, res) => json(res, 202, { id: "exr_1", object: "run", status: "queued" }));
  const params = {
    file: { url: "https://example.com/invoice.pdf" },
    schema: {
      type: "object",
      properties: {
        invoice_number: { type: "string" },
        customer: { type: "object", properties: { name: { type: "string" }, email: { type: "string" } } },
        total: { type: ["number", "null"] },
      },
      required: ["invoice_number"],
    },
    metadata: { z: 1, a: { y: [{ q: 1, b: 2.5 }], c: true } },
    ttl: 3600,
  };
  await client(server.url).extract(params);
  assert.equal(server.requests[0].body, JSON.stringify(params));
});

test("params_beyond_ascii_reach_the_server_as_their_utf8_and_a_null_field_is_still_dropped", async () => {
  // The client reads an ASCII params text straight into wasm and any other through the runtime's encoder: both ways
  // must give the caller's characters (two and three bytes, a pair of surrogates), byte for byte where the text is
  // sent as it is, and the same after a change (a `null` field dropped) to the text.
  const server = await scripted((req, res) => json(res, 202, { id: "exr_1", object: "run", status: "queued" }));
  const c = client(server.url);
  const file = { url: "https://example.com/facture-é.pdf" };
  const schema = { type: "object", properties: { total: { type: "number", description: "Montant dû € 😀 — ü" } } };
  await c.extract({ file, schema, metadata: { note: "日本語" } });
  assert.equal(server.requests[0].body, JSON.stringify({ file, schema, metadata: { note: "日本語" } }));
  await c.extract({ file, schema, ttl: null });
  assert.equal(server.requests[1].body, JSON.stringify({ file, schema }));
  await c.extract({ file: { url: "https://example.com/a.pdf" }, schema: { type: "object", properties: {} } });
  assert.equal(server.requests[2].body, '{"file":{"url":"https://example.com/a.pdf"},"schema":{"type":"object","properties":{}}}');
});

test("an_approval_keeps_the_callers_order_and_appends_the_decision", async () => {
  const server = await scripted((req, res) => json(res, 200, { id: "apr_1", decision: "approve" }));
  await client(server.url).agentRuns.approve("agr_1", "apr_1", { params: { zeta: 1, alpha: 2 }, note: "ok" });
  assert.equal(server.requests[0].body, '{"params":{"zeta":1,"alpha":2},"note":"ok","decision":"approve"}');
});

test("a_null_field_and_a_file_references_unknown_key_are_not_sent_and_the_rest_keeps_the_callers_order", async () => {
  const server = await scripted((req, res) => json(res, 202, { id: "par_1", status: "queued" }));
  await client(server.url).parse({ ttl: null, files: [{ url: "https://files.example/a.pdf", x: 1 }], zeta: 1, alpha: 2 });
  assert.equal(server.requests[0].body, '{"files":[{"url":"https://files.example/a.pdf"}],"zeta":1,"alpha":2}');
});

test("a_param_of_the_wrong_type_is_refused_at_its_path_and_nothing_is_sent", async () => {
  const server = await scripted((req, res) => json(res, 202, { id: "sgr_1", status: "needs_input" }));
  const c = client(server.url);
  const cases = [
    [() => c.extract({ file: { url: 5 } }), "file.url: must be a string"],
    [() => c.sign({ file: { id: "file_1" }, signers: [{ name: "Ann" }] }), "signers[0].email: is required"],
    [() => c.agentRuns.create({ agent: "agt_1" }), "files: is required"],
    [() => c.runs.list({ metadata: { team: 7 } }), "metadata.team: must be a string"],
  ];
  for (const [call, message] of cases) {
    await assert.rejects(call(), (e) => {
      assert.ok(e instanceof sdk.BadRequestError, e.name);
      assert.equal(e.code, "invalid_request");
      assert.equal(e.message, `400 invalid_request: ${message}`);
      return true;
    });
  }
  assert.equal(server.requests.length, 0);
});

// 6. Hostile values the app hands the client: a getter, a `toJSON` or a `Proxy` trap that throws, a revoked
// `Proxy`, a `BigInt`, a cycle. Touching them must never unwind an exception through wasm (that skips destructors
// and borrow guards; after a few thousand such calls the instance fails every call): each method returns a promise
// that rejects with `invalid_request`, and nothing is sent.

function hostileValues() {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const cycle = {};
  cycle.self = cycle;
  const boom = () => {
    throw new Error("boom");
  };
  return {
    "a throwing getter": { get name() { return boom(); }, get maxRetries() { return boom(); } },
    "a throwing toJSON": { toJSON: boom },
    "a Proxy whose ownKeys throws": new Proxy({}, { ownKeys: boom }),
    // The runtime refuses keys that repeat (a Proxy invariant), so `JSON.stringify` never writes a name twice: the
    // client reads its text without comparing names (`Doc::parse_unique`).
    "a Proxy whose ownKeys repeats a name": new Proxy({ name: "n" }, { ownKeys: () => ["name", "name"] }),
    "a Proxy whose get throws": new Proxy({ name: "n" }, { get: boom }),
    "a revoked Proxy": revoked.proxy,
    "a BigInt member": { name: 1n, maxRetries: 1n },
    "a cycle": cycle,
  };
}

/** Each method with the hostile value as its params, then as its per-call options. */
const HOSTILE_CALLS = [
  ["configs.create params", (c, v) => c.configs.create("extract", v)],
  ["extract params", (c, v) => c.extract(v)],
  ["runs.list params", (c, v) => c.runs.list(v)],
  ["agentRuns.approve params", (c, v) => c.agentRuns.approve("agr_1", "apr_1", v)],
  ["runs.retrieve options", (c, v) => c.runs.retrieve("exr_1", v)],
  ["runs.waitFor options", (c, v) => c.runs.waitFor("exr_1", v)],
  ["configs.create options", (c, v) => c.configs.create("extract", { name: "n" }, v)],
  ["files.waitUntilReady options", (c, v) => c.files.waitUntilReady("file_1", v)],
];

test("hostile_params_and_options_reject_with_invalid_request_and_nothing_is_sent", async () => {
  const server = await scripted((req, res) => json(res, 200, { id: "exr_1", object: "extract_run", status: "processed" }));
  const c = client(server.url);
  for (const [what, value] of Object.entries(hostileValues())) {
    for (const [method, call] of HOSTILE_CALLS) {
      let promise;
      assert.doesNotThrow(() => {
        promise = call(c, value);
      }, `${method} with ${what} threw synchronously`);
      await assert.rejects(promise, (e) => {
        assert.ok(e instanceof sdk.BadRequestError, `${method} with ${what}: ${e?.name}: ${e?.message}`);
        assert.equal(e.code, "invalid_request", `${method} with ${what}`);
        return true;
      });
    }
  }
  assert.equal(server.requests.length, 0);
});

test("twenty_thousand_hostile_calls_leave_the_instance_working", async () => {
  const server = await scripted((req, res) => json(res, 200, { id: "exr_1", object: "extract_run", status: "processed" }));
  const c = client(server.url);
  const values = Object.values(hostileValues());
  for (let i = 0; i < 20_000; i++) {
    const [, call] = HOSTILE_CALLS[i % HOSTILE_CALLS.length];
    try {
      await call(c, values[i % values.length]);
    } catch {
      // each is refused; the point is what the instance does afterwards
    }
  }
  const run = await c.runs.retrieve("exr_1");
  assert.equal(run.status, "processed");
  sdk.validateExtractionSchema({ type: "object", properties: { a: { type: "string" } } });
  assert.equal(server.requests.length, 1);
});

// 6b. A Retry-After the client cannot read: neither a number of seconds nor an HTTP date ends the call with
// the error instead of a resend on the client's own backoff; 400 digits of seconds are longer than any cap.

test("a_retry_after_that_cannot_be_read_ends_the_call_with_the_error_and_is_not_resent", async () => {
  for (const value of ["1e400", "Infinity", "-5", "NaN", "soon", "9".repeat(400)]) {
    const server = await scripted((req, res, n) => {
      if (n === 0) return json(res, 429, { code: "rate_limited", retryable: true }, { "retry-after": value });
      json(res, 200, { id: "exr_1", object: "extract_run", status: "processed" });
    });
    const error = await client(server.url)
      .runs.retrieve("exr_1")
      .then(() => assert.fail(`resolved after Retry-After ${value.slice(0, 12)}`), (e) => e);
    assert.equal(server.requests.length, 1, `Retry-After ${value.slice(0, 12)} was resent`);
    assert.ok(error instanceof sdk.RateLimitError, `${error?.name}: ${error?.message}`);
    assert.equal(error.retryable, true);
    assert.equal(error.retryAfter, value.length === 400 ? 1e12 : undefined, value.slice(0, 12));
  }
});

// 6c. Answers of the wrong shape: a 2xx that is not the route's JSON object rejects with its own code and
// is not resent; a page's extra member is never written again; an error envelope keeps its code whenever JSON.parse
// reads it.

test("a_2xx_that_is_not_a_json_object_rejects_with_unexpected_shape_and_is_not_resent", async () => {
  for (const body of ["null", "[]", '["exr_1"]', '"run"', "5", ""]) {
    const server = await scripted((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
    const c = client(server.url);
    for (const call of [() => c.runs.retrieve("exr_1"), () => c.runs.waitFor("exr_1")]) {
      const before = server.requests.length;
      const error = await call().then(() => assert.fail(`resolved for ${JSON.stringify(body)}`), (e) => e);
      assert.ok(error instanceof sdk.APIError && !(error instanceof sdk.APIConnectionError), `${error?.name}: ${error?.message}`);
      assert.equal(error.code, "unexpected_shape", body);
      assert.equal(error.status, 200);
      assert.equal(server.requests.length - before, 1, `${JSON.stringify(body)} was resent`);
    }
  }
});

// A live session's address: the spec says "the response carries a `wss://` address with a single-use ticket" and
// names no field. The client reads `url`, else `wsUrl`; the method's value always has `url`, a ws(s) URL; an answer
// without one rejects with `unexpected_shape`, and the ticket (a secret) is in no part of the error.
const TICKET = "tkt_SECRET_7f3a9c";
const SESSION_ADDRESS = `wss://h/x?ticket=${TICKET}`;

test("a_realtime_session_resolves_with_its_address_as_url_whether_the_service_names_it_url_or_wsUrl", async () => {
  const answers = [
    { id: "rts_1", url: SESSION_ADDRESS },
    { id: "rts_2", wsUrl: SESSION_ADDRESS, sampleRate: 16000 },
  ];
  const server = await scripted((req, res, n) => json(res, 201, answers[n]));
  const c = client(server.url);
  const named = await c.realtime.createSession({});
  assert.equal(named.url, SESSION_ADDRESS, "the address the service named url");
  assert.equal(named.id, "rts_1");
  const { data, response } = await c.realtime.createSession({}).withResponse();
  assert.equal(data.url, SESSION_ADDRESS, "the address the service named wsUrl, as url");
  assert.deepEqual(
    { id: data.id, wsUrl: data.wsUrl, sampleRate: data.sampleRate },
    { id: "rts_2", wsUrl: SESSION_ADDRESS, sampleRate: 16000 },
    "every other field as the service sent it",
  );
  assert.equal(response.status, 201);
  assert.equal(server.requests.length, 2);
  assert.ok(server.requests.every((r) => r.method === "POST" && r.url === "/v1/realtime/transcriptions"));
});

test("a_realtime_session_without_a_ws_address_rejects_with_unexpected_shape_and_the_ticket_is_in_no_part_of_the_error", async () => {
  const answers = [
    { id: "rts_3" },
    { url: `https://h/x?ticket=${TICKET}` },
    { id: "rts_5", url: "" },
    { id: "rts_6", url: 5 },
    { id: "rts_7", url: null },
    { id: "rts_8", wsUrl: `ftp://h/x?ticket=${TICKET}` },
    // A url that is there but not a ws(s) URL is refused, not passed over for wsUrl.
    { id: "rts_9", url: `http://h/x?ticket=${TICKET}`, wsUrl: SESSION_ADDRESS },
  ];
  const server = await scripted((req, res, n) => json(res, 201, answers[n]));
  const c = client(server.url);
  for (const answer of answers) {
    const shown = JSON.stringify(Object.keys(answer));
    const error = await c.realtime.createSession({}).then(
      (s) => assert.fail(`resolved for an answer with ${shown}: url is ${typeof s?.url}`),
      (e) => e,
    );
    assert.ok(error instanceof sdk.APIError && !(error instanceof sdk.APIConnectionError), `${error?.name}: ${error?.code}`);
    assert.equal(error.code, "unexpected_shape", shown);
    assert.equal(error.status, 201, shown);
    for (const [part, text] of [
      ["message", error.message],
      ["JSON", JSON.stringify(error)],
      ["stack", String(error.stack)],
      ["String()", String(error)],
    ]) {
      assert.ok(!text.includes(TICKET), `the error's ${part} holds the ticket (${shown})`);
    }
  }
  assert.equal(server.requests.length, answers.length, "no answer was resent");
});

test("a_list_page_with_a_100000_deep_extra_member_is_read_and_a_deep_cursor_is_refused_not_resent", async () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  const pages = [
    `{"object":"list","data":[{"id":"exr_1"}],"has_more":false,"cursor":null,"extra":${deep}}`,
    `{"object":"list","data":[{"id":"exr_1"}],"has_more":true,"cursor":${deep}}`,
  ];
  const server = await scripted((req, res, n) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(pages[n]);
  });
  const c = client(server.url);
  const ids = [];
  for await (const run of c.runs.list()) ids.push(run.id);
  assert.deepEqual(ids, ["exr_1"]);
  const error = await c.runs.list().then(() => assert.fail("resolved"), (e) => e);
  assert.ok(error instanceof sdk.APIError && !(error instanceof sdk.APIConnectionError), `${error?.name}: ${error?.message}`);
  assert.equal(server.requests.length, 2, "neither page was resent");
});

test("an_error_envelope_keeps_its_code_whenever_json_parse_reads_it", async () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  const bodies = [
    String.raw`{"code":"invalid_schema","message":"bad \ud800 field"}`,
    `{"code":"invalid_schema","message":"bad","limit":1e400}`,
    `{"code":"invalid_schema","message":"bad","detail":${deep}}`,
  ];
  for (const body of bodies) {
    const server = await scripted((req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(body);
    });
    const error = await client(server.url)
      .runs.retrieve("exr_1")
      .then(() => assert.fail("resolved"), (e) => e);
    assert.ok(error instanceof sdk.BadRequestError, `${error?.name}: ${error?.message}`);
    assert.equal(error.code, "invalid_schema", body.slice(0, 60));
    assert.equal(server.requests.length, 1);
  }
});

// 7. Loose ends.

test("a_timeout_above_2_31_ms_is_clamped_instead_of_firing_at_once", async () => {
  const server = await scripted((req, res) => setTimeout(() => json(res, 200, { id: "exr_1", status: "processed" }), 200));
  const run = await client(server.url, { timeoutMs: 3e9 }).runs.retrieve("exr_1");
  assert.equal(run.id, "exr_1");
  const waited = await client(server.url, { timeoutMs: 3e9 }).runs.waitFor("exr_1");
  assert.equal(waited.status, "processed");
});

test("a_retry_delay_above_2_31_ms_in_a_wait_does_not_fire_at_once", async () => {
  const server = await scripted((req, res) =>
    json(res, 429, { code: "rate_limited", message: "slow down", retryable: true }, { "retry-after": "3000000" }),
  );
  const controller = new AbortController();
  const pending = client(server.url, { maxRetryAfterMs: 4e9 }).runs.waitFor("exr_1", { signal: controller.signal });
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(server.requests.length, 1, "the 3e9 ms pause did not fire at once");
  controller.abort();
  await assert.rejects(pending, sdk.APIUserAbortError);
});

test("an_answer_larger_than_the_cap_is_refused_with_a_code", async () => {
  const MiB = 1024 * 1024;
  const server = await scripted((req, res, n) => {
    if (n === 0) {
      // Declared too large: refused unread.
      res.writeHead(200, { "content-type": "application/json", "content-length": String(100 * MiB) });
      res.write("{");
      return;
    }
    // Unknown length (chunked), 65 MiB: read up to the cap, then cancelled.
    res.writeHead(200, { "content-type": "application/json" });
    const chunk = Buffer.alloc(MiB, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < 65) {
        sent += 1;
        if (!res.write(chunk)) return res.once("drain", pump);
      }
      res.end("{}");
    };
    res.on("error", () => {});
    pump();
  });
  const c = client(server.url);
  for (let i = 0; i < 2; i++) {
    const error = await c.runs.retrieve("exr_1").then(() => assert.fail("resolved"), (e) => e);
    assert.ok(error instanceof sdk.APIError, `${error?.name}: ${error?.message}`);
    assert.equal(error.code, "response_too_large");
    assert.equal(error.retryable, false);
  }
  assert.equal(server.requests.length, 2, "not retried");
});

// 7. One meaning of abort for every method: each kind of flow (one call, a wait, an upload, a download, a page) runs
// on the one driver; a signal that fires mid-flow (during an attempt or a pause) ends it with `APIUserAbortError`
// and nothing more is sent, and an already-aborted signal sends nothing.

const notReady = (res) => json(res, 409, { code: "output_not_ready", message: "not yet", retryable: true });
const FLOWS = [
  // [name, server script, the method call, requests sent before the abort]
  ["a_single_call_in_its_attempt", () => {}, (c, signal) => c.agents.retrieve("agt_1", { signal }), 1],
  [
    "a_wait_in_its_pause",
    (req, res) => json(res, 200, { id: "agr_1", object: "agent_run", status: "waiting" }),
    (c, signal) => c.agentRuns.waitFor("agr_1", { signal }),
    1,
  ],
  [
    "an_upload_in_its_put",
    (req, res, n) => (n === 0 ? json(res, 201, { id: "file_1", status: "pending", uploadUrl: `http://${req.headers.host}/upload/1` }) : undefined),
    (c, signal) => c.files.upload({ name: "a.txt", mimeType: "text/plain", data: "hello" }, { signal }),
    2,
  ],
  ["a_download_waiting_for_its_output", (req, res) => notReady(res), (c, signal) => c.runs.downloadOutput("exr_1", "a.pdf", { signal }), 1],
  ["a_page_in_its_attempt", () => {}, (c, signal) => c.runs.list({}, { signal }), 1],
];

for (const [name, script, call, sent] of FLOWS) {
  test(`abort_ends_${name}_with_user_abort_error`, { timeout: 20_000 }, async () => {
    const server = await scripted(script);
    const controller = new AbortController();
    const pending = call(client(server.url, { maxRetries: 0 }), controller.signal);
    while (server.requests.length < sent) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    const error = await pending.then(() => assert.fail("resolved"), (e) => e);
    assert.ok(error instanceof sdk.APIUserAbortError, `${error?.name}: ${error?.message}`);
    assert.equal(error.code, "aborted");
    assert.equal(server.requests.length, sent, "nothing sent after the abort");
  });

  test(`an_aborted_signal_sends_nothing_for_${name}`, async () => {
    const server = await scripted(script);
    const error = await call(client(server.url), AbortSignal.abort()).then(() => assert.fail("resolved"), (e) => e);
    assert.ok(error instanceof sdk.APIUserAbortError, `${error?.name}: ${error?.message}`);
    assert.equal(server.requests.length, 0);
  });
}

test("a_pages_items_are_what_json_parse_makes_of_the_answer_numbers_and_member_order_included", async () => {
  // Numbers a float reader can misread (2.2250738585072011e-308: serde_json was one unit off) or a writer can
  // reprint, and members out of alphabetical order.
  const text = `{"object":"list","data":[{"z":0.1,"id":"exr_1","a":[1e-7,9007199254740993,1.5e300,-0.0,2.2250738585072011e-308,123456789012345678901234567890]}],"has_more":false,"cursor":null}`;
  const server = await scripted((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(text);
  });
  const page = await client(server.url).runs.list({});
  assert.deepStrictEqual(page.data, JSON.parse(text).data);
  assert.deepStrictEqual(Object.keys(page.data[0]), ["z", "id", "a"]);
  assert.ok(Object.is(page.data[0].a[3], -0));
});

test("a_large_pages_items_never_enter_wasm_memory", async () => {
  // 40 MiB of items (within the 64 MiB read cap). Read into wasm as text and built into a JSON tree there, they grew
  // the wasm memory (which never shrinks) by several times their size; now the core sees the page without them.
  const item = { id: "exr_0", status: "succeeded", metadata: { note: "x".repeat(2000) } };
  const count = 20 * 1024;
  const data = Array.from({ length: count }, (_, i) => ({ ...item, id: `exr_${i}` }));
  const text = JSON.stringify({ object: "list", data, has_more: true, cursor: "c2" });
  assert.ok(text.length > 40 * 1024 * 1024, `page of ${text.length} bytes`);
  const server = await scripted((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(text);
  });
  const before = await wasmMemoryBytes();
  const page = await client(server.url).runs.list({});
  const grown = (await wasmMemoryBytes()) - before;
  assert.equal(page.data.length, count);
  assert.deepStrictEqual(page.data[count - 1], data[count - 1]);
  assert.equal(page.hasNextPage(), true);
  assert.ok(grown < 4 * 1024 * 1024, `wasm memory grew by ${grown} bytes for a ${text.length}-byte page`);
});

test("calls_in_a_loop_that_never_yields_to_the_event_loop_do_not_hold_their_memory", async () => {
  // A `fetch` mock that answers in microtasks: the loop below never reaches a macrotask, so a finished call's handle
  // (here its 20 KB params) freed only by a `setImmediate` was held by every call until the loop ended.
  const answer = JSON.stringify({ object: "extract_config", id: "cfg_1", name: "x" });
  const fetch = async () => new Response(answer, { status: 201, headers: { "content-type": "application/json" } });
  const c = new sdk.DocAuto({ apiKey: KEY, baseUrl: "http://127.0.0.1:9", fetch, logLevel: "off" });
  const properties = {};
  for (let i = 0; i < 200; i++) properties[`field_${i}`] = { type: "string", description: "d".repeat(80) };
  const params = { name: "x", config: { schema: { type: "object", properties } } };
  assert.ok(JSON.stringify(params).length > 20_000);
  await c.configs.create("extract", params);
  const before = await wasmMemoryBytes();
  let settledInMicrotasks = true;
  setImmediate(() => (settledInMicrotasks = false));
  for (let i = 0; i < 3000; i++) assert.equal((await c.configs.create("extract", params)).id, "cfg_1");
  assert.ok(settledInMicrotasks, "the loop reached the event loop: it tests nothing");
  const grown = (await wasmMemoryBytes()) - before;
  assert.ok(grown < 8 * 1024 * 1024, `wasm memory grew by ${grown} bytes over 3000 calls`);
});

test("a_page_without_an_array_of_items_is_still_refused_by_the_core", async () => {
  for (const [body, needle] of [
    [`{"object":"list","data":{"0":1},"has_more":false}`, "`data` is not an array"],
    [`[{"id":"exr_1"}]`, "not an object"],
    [`{"object":"list","data":[],"has_more":"yes"}`, "`has_more` is not a boolean"],
    [`{"object":"list","data":[{"id":"exr_1"}],"has_more":1}`, "`has_more` is not a boolean"],
  ]) {
    const server = await scripted((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
    const error = await client(server.url).runs.list({}).then(() => assert.fail(`resolved for ${body}`), (e) => e);
    assert.equal(error.code, "unexpected_shape", `${body}: ${error.message}`);
    assert.ok(error.message.includes(needle), `${body}: ${error.message}`);
  }
});

test("an_error_body_over_1_mib_is_not_read_and_the_error_comes_from_the_status", async () => {
  // 40 MiB error bodies (declared length, then chunked): reading and parsing them in wasm grew its memory by twice
  // their size on every failed attempt; the spec's error envelope is a few hundred bytes.
  const huge = JSON.stringify({ error: { code: "internal", message: "boom", details: "x".repeat(40 * 1024 * 1024) } });
  const small = JSON.stringify({ error: { code: "run_expired", message: "gone", details: "y".repeat(900 * 1024) } });
  const server = await scripted((req, res, n) => {
    const headers = { "content-type": "application/json", "x-request-id": `req_${n}` };
    if (n === 0) {
      res.writeHead(404, { ...headers, "content-length": String(Buffer.byteLength(huge)) });
      res.end(huge);
    } else if (n === 1) {
      res.writeHead(404, headers);
      res.on("error", () => {});
      for (let i = 0; i < 40; i++) res.write(huge.slice(i * 1024 * 1024, (i + 1) * 1024 * 1024));
      res.end(huge.slice(40 * 1024 * 1024));
    } else {
      res.writeHead(410, headers);
      res.end(small);
    }
  });
  const c = client(server.url);
  const before = await wasmMemoryBytes();
  for (const requestId of ["req_0", "req_1"]) {
    const error = await c.runs.retrieve("exr_1").then(() => assert.fail("resolved"), (e) => e);
    assert.ok(error instanceof sdk.NotFoundError, `${error?.name}: ${error?.message}`);
    assert.equal(error.code, "not_found");
    assert.equal(error.requestId, requestId);
    assert.match(error.message, /longer than 1048576 bytes and was not read/);
  }
  const grown = (await wasmMemoryBytes()) - before;
  assert.ok(grown < 4 * 1024 * 1024, `wasm memory grew by ${grown} bytes`);
  // An error body under the cap is read: its code and message are the service's.
  const error = await c.runs.retrieve("exr_1").then(() => assert.fail("resolved"), (e) => e);
  assert.equal(error.code, "run_expired");
  assert.match(error.message, /gone/);
});

test("a_compressed_answer_is_capped_by_its_decoded_size_not_its_content_length", async () => {
  // 100 MiB of JSON whitespace gzipped to about 100 KB, with a true `content-length` of the compressed bytes: `fetch`
  // decodes it, so the declared length says nothing of what reading it costs (a decompression bomb).
  const MiB = 1024 * 1024;
  const bomb = gzipSync(Buffer.concat([Buffer.alloc(100 * MiB, 0x20), Buffer.from("{}")]));
  assert.ok(bomb.length < MiB);
  const server = await scripted((req, res) => {
    res.writeHead(200, {
      "content-type": "application/json",
      "content-encoding": "gzip",
      "content-length": String(bomb.length),
    });
    res.end(bomb);
  });
  const error = await client(server.url).runs.retrieve("exr_1").then(() => assert.fail("resolved"), (e) => e);
  assert.ok(error instanceof sdk.APIError, `${error?.name}: ${error?.message}`);
  assert.equal(error.code, "response_too_large");
});

test("output_url_is_an_absolute_http_url_never_a_javascript_or_data_url", async () => {
  // The spec: "302 redirect to a signed download URL". A page may put it in a link: only http(s) gets through.
  const locations = ["/dl/a.pdf?sig=1", "javascript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>"];
  const server = await scripted((req, res, n) => {
    res.writeHead(302, { location: locations[n] });
    res.end();
  });
  const c = client(server.url);
  assert.equal(await c.runs.outputUrl("exr_1", "a.pdf"), `${server.url}/dl/a.pdf?sig=1`);
  for (const _ of locations.slice(1)) {
    const error = await c.runs.outputUrl("exr_1", "a.pdf").then((u) => assert.fail(`resolved ${u}`), (e) => e);
    assert.equal(error.code, "invalid_location", `${error?.name}: ${error?.message}`);
  }
});
