// The client's own behaviour end to end: configuration, environment fallback, logging, and the API key's safety
// (never in an error, a log line, or a request to another host).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadSdk, startEmulator, serveFiles, fetchSpy, rejectsWith, KEY } from "./harness.mjs";

const sdk = await loadSdk();
let emu, docs;

before(async () => {
  emu = await startEmulator();
  docs = await serveFiles({ "/a.txt": { body: "Contract A.", type: "text/plain" } });
});
after(async () => {
  await emu?.stop();
  await docs?.close();
});

test("api_key_and_base_url_fall_back_to_the_environment", async () => {
  const saved = { ...process.env };
  try {
    process.env.DOCAUTO_API_KEY = KEY;
    process.env.DOCAUTO_BASE_URL = emu.baseUrl;
    const client = new sdk.DocAuto();
    assert.equal(client.baseUrl, emu.baseUrl);
    const list = await client.agents.list();
    assert.ok(list.data.length > 0);
    delete process.env.DOCAUTO_API_KEY;
    assert.throws(
      () => new sdk.DocAuto({ baseUrl: emu.baseUrl }),
      (e) => e instanceof sdk.BadRequestError && e.code === "invalid_config" && /apiKey/.test(e.message),
    );
  } finally {
    process.env = saved;
  }
});

test("missing_or_bad_settings_throw_invalid_config", () => {
  const check = (options, field) => {
    try {
      new sdk.DocAuto(options);
    } catch (e) {
      assert.ok(e instanceof sdk.BadRequestError, e.name);
      assert.equal(e.code, "invalid_config");
      assert.match(e.message, new RegExp(field));
      return;
    }
    assert.fail(`no error for ${JSON.stringify(options)}`);
  };
  check({ apiKey: KEY }, "baseUrl");
  check({ apiKey: KEY, baseUrl: "ftp://x" }, "baseUrl");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, maxRetries: -1 }, "maxRetries");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, timeoutMs: 0 }, "timeoutMs");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "loud" }, "logLevel");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: "no" }, "fetch");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, apikey: "typo" }, "apikey");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, defaultHeaders: { "bad header": "x" } }, "defaultHeaders");
  // JS values JSON has no form for must not read as "not given".
  check({ apiKey: KEY, baseUrl: emu.baseUrl, timeoutMs: NaN }, "timeoutMs");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, maxRetries: Infinity }, "maxRetries");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, defaultHeaders: { "x-team": 7 } }, "defaultHeaders.x-team");
  check({ apiKey: KEY, baseUrl: emu.baseUrl, apiKey: () => KEY }, "options");
  check("sk_live_in_the_wrong_place", "options");
});

test("unknown_request_option_is_refused", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  await rejectsWith(assert, client.agents.list({ idempotency_key: "x" }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, client.agents.list({ wait: 5 }), sdk.BadRequestError, "invalid_request");
});

test("debug_log_lines_name_method_path_status_request_id_attempt_elapsed_never_the_key", async () => {
  const lines = [];
  const logger = { debug: (l) => lines.push(l), info: (l) => lines.push(l), warn: (l) => lines.push(l), error: (l) => lines.push(l) };
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "debug", logger });
  await client.agents.retrieve("agt_contract_review");
  await client.agents.retrieve("agt_nope").catch(() => {});
  const text = lines.join("\n");
  assert.match(text, /GET \/v1\/agents\/agt_contract_review attempt 1\/3/);
  assert.match(text, /GET \/v1\/agents\/agt_contract_review -> 200 request_id=req_\S+ elapsed_ms=\d+/);
  assert.match(text, /-> 404/);
  assert.ok(!text.includes(KEY), "the key is never logged");
  assert.ok(!text.includes("Contract review"), "bodies are never logged");
  const quiet = [];
  const silent = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off", logger: { ...logger, error: (l) => quiet.push(l) } });
  await silent.agents.retrieve("agt_nope").catch(() => {});
  assert.equal(quiet.length, 0);
});

const SECRET = "sk_live_SECRET_0123456789abcdef";

function assertKeyAbsent(e) {
  for (const text of [e.message, String(e), JSON.stringify(e), e.stack ?? "", JSON.stringify(e.headers ?? {})]) {
    assert.ok(!text.includes(SECRET), `the key leaked into ${e.name}: ${text.slice(0, 200)}`);
  }
}

test("api_key_never_appears_in_any_error", async () => {
  const errors = [];
  const collect = (p) => p.then(() => assert.fail("expected an error"), (e) => errors.push(e));
  // The service's own refusal (the emulator does not know this key).
  await collect(new sdk.DocAuto({ apiKey: SECRET, baseUrl: emu.baseUrl, logLevel: "off" }).agents.list());
  // A runtime error that quotes the request, a server that echoes the header, a body that is not JSON.
  const echo = async (url, init) => {
    const auth = new Headers(init.headers).get("authorization");
    if (url.includes("throw")) throw new TypeError(`request to ${url} with ${auth} failed`);
    if (url.includes("html")) return new Response(`<html>${auth}</html>`, { status: 500, headers: { "content-type": "text/html" } });
    return new Response(JSON.stringify({ code: "invalid_token", message: `bad token ${auth}`, retryable: false }), {
      status: 401,
      headers: { "content-type": "application/json", "x-echo": `${auth}` },
    });
  };
  const fake = (path) => new sdk.DocAuto({ apiKey: SECRET, baseUrl: `https://api.example.com/${path}`, fetch: echo, maxRetries: 0, logLevel: "off" });
  await collect(fake("throw").agents.list());
  await collect(fake("html").agents.list());
  await collect(fake("echo").agents.list());
  // Connection refused, timeout, validation, config.
  await collect(new sdk.DocAuto({ apiKey: SECRET, baseUrl: "http://127.0.0.1:9", maxRetries: 0, logLevel: "off" }).agents.list());
  await collect(new sdk.DocAuto({ apiKey: SECRET, baseUrl: emu.baseUrl }).agentRuns.create({ agent: "", files: [] }));
  try {
    new sdk.DocAuto({ apiKey: SECRET, baseUrl: `nope${SECRET}` });
  } catch (e) {
    errors.push(e);
  }
  assert.equal(errors.length, 7);
  assert.ok(errors[0] instanceof sdk.AuthenticationError);
  assert.ok(errors[1] instanceof sdk.APIConnectionError);
  assert.ok(errors[2] instanceof sdk.InternalServerError);
  assert.equal(errors[2].code, "non_json_body");
  assert.ok(errors[3] instanceof sdk.AuthenticationError);
  assert.ok(errors[4] instanceof sdk.APIConnectionError);
  errors.forEach(assertKeyAbsent);
});

test("api_key_is_only_sent_to_the_base_url_origin", async () => {
  // A storage host that is not the API: the upload URL and the signed download point there.
  const calls = [];
  const fakeFetch = async (url, init) => {
    const headers = Object.fromEntries(new Headers(init.headers));
    calls.push({ url, method: init.method, headers });
    const u = new URL(url);
    const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    if (u.host === "storage.example.net") {
      return init.method === "PUT" ? new Response(null, { status: 200 }) : new Response("bytes", { status: 200 });
    }
    if (u.pathname === "/v1/files" && init.method === "POST") {
      return json({ id: "file_1", status: "pending", uploadUrl: "https://storage.example.net/put/abc?sig=1" }, 201);
    }
    if (u.pathname === "/v1/files/file_1") return json({ id: "file_1", status: "ready" });
    if (u.pathname === "/v1/runs/exr_1/output/out.txt") {
      return new Response(null, { status: 302, headers: { location: "https://storage.example.net/get/out.txt?sig=2" } });
    }
    return json({ code: "not_found" }, 404);
  };
  const client = new sdk.DocAuto({
    apiKey: SECRET,
    baseUrl: "https://api.example.com",
    fetch: fakeFetch,
    defaultHeaders: { "x-team": "docs" },
  });
  const file = await client.files.upload({ name: "a.txt", mimeType: "text/plain", data: "hello" });
  assert.equal(file.status, "ready");
  const bytes = await client.runs.downloadOutput("exr_1", "out.txt");
  assert.equal(new TextDecoder().decode(bytes), "bytes");
  assert.equal(await client.runs.outputUrl("exr_1", "out.txt"), "https://storage.example.net/get/out.txt?sig=2");
  const outside = calls.filter((c) => new URL(c.url).origin !== "https://api.example.com");
  assert.equal(outside.length, 2);
  for (const c of outside) {
    assert.equal(c.headers.authorization, undefined, `${c.method} ${c.url} carried the key`);
    assert.equal(c.headers["x-team"], undefined, "default headers stay on the API origin");
    assert.ok(!JSON.stringify(c).includes(SECRET));
  }
  for (const c of calls.filter((c) => !outside.includes(c))) {
    assert.equal(c.headers.authorization, `Bearer ${SECRET}`);
    assert.equal(c.headers["x-team"], "docs");
  }
});

test("api_key_never_leaves_for_another_host_in_a_real_flow", async () => {
  const { spy, calls } = fetchSpy();
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: spy });
  await client.files.upload({ name: "a.txt", mimeType: "text/plain", data: "hello" });
  const run = await client.agentRuns.create({ agent: "agt_contract_review", files: [{ url: `${docs.url}/a.txt` }] });
  await client.agentRuns.waitFor(run.id, { until: "settled" });
  await client.webhooks.jwks();
  for (const c of calls) {
    const api = c.url.startsWith(`${emu.baseUrl}/v1/`) && !c.url.endsWith("/jwks.json");
    assert.equal(c.headers.authorization !== undefined, api, `${c.method} ${c.url}`);
  }
});

test("validate_extraction_schema_is_exported_and_uses_the_service_codes", () => {
  assert.equal(sdk.validateExtractionSchema({ type: "object", properties: { total: { type: "number" } } }), undefined);
  const codeOf = (schema) => {
    try {
      sdk.validateExtractionSchema(schema);
    } catch (e) {
      assert.ok(e instanceof sdk.BadRequestError);
      return e.code;
    }
    return "ok";
  };
  assert.equal(codeOf({ type: "array" }), "invalid_schema");
  assert.equal(codeOf({ type: "object", properties: { a: { $ref: "#/x" } } }), "invalid_schema");
  assert.equal(codeOf({ type: "object", properties: { big: { description: "x".repeat(70_000) } } }), "schema_too_large");
  assert.equal(codeOf({ type: "object", properties: { oneOf: { type: "string" } } }), "ok");
});

test("error_classes_have_names_and_an_instanceof_chain", () => {
  const names = [
    "BadRequestError", "AuthenticationError", "CreditsExhaustedError", "PermissionDeniedError", "NotFoundError",
    "ConflictError", "GoneError", "UnprocessableEntityError", "RateLimitError", "InternalServerError",
    "APIConnectionError", "APITimeoutError", "APIUserAbortError",
  ];
  for (const name of names) {
    const e = new sdk[name]("m", { status: 400, code: "c" });
    assert.equal(e.name, name);
    assert.ok(e instanceof sdk.APIError && e instanceof Error);
    assert.equal(e.code, "c");
  }
  const w = new sdk.WebhookVerificationError("expired", "too old");
  assert.equal(w.name, "WebhookVerificationError");
  assert.equal(w.code, "expired");
  assert.ok(w instanceof Error);
});

test("namespaces_are_one_object_each_and_with_response_gives_plain_headers", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  assert.equal(client.runs, client.runs);
  assert.equal(client.agentRuns, client.agentRuns);
  assert.notEqual(client.runs, new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl }).runs);
  const { data, response } = await client.agents.list().withResponse();
  assert.equal(data.object, "list");
  assert.equal(response.status, 200);
  assert.equal(Object.getPrototypeOf(response.headers), Object.prototype);
  assert.match(response.headers["content-type"], /^application\/json/);
  assert.equal(response.headers["x-request-id"], response.requestId);
  assert.equal(response.idempotentReplay, false);
  // A body that is not JSON on a 2xx is still the core's `non_json_body`, with the request id.
  const html = new sdk.DocAuto({
    apiKey: KEY,
    baseUrl: "https://api.example.com",
    maxRetries: 0,
    logLevel: "off",
    fetch: async () => new Response("<html>", { status: 200, headers: { "x-request-id": "req_html" } }),
  });
  const e = await rejectsWith(assert, html.agents.list(), sdk.APIError, "non_json_body");
  assert.equal(e.requestId, "req_html");
  // An empty 2xx body is not the route's object (it does not resolve `null`): `unexpected_shape`.
  const empty = new sdk.DocAuto({
    apiKey: KEY,
    baseUrl: "https://api.example.com",
    logLevel: "off",
    fetch: async () => new Response("", { status: 200 }),
  });
  await rejectsWith(assert, empty.agents.list(), sdk.APIError, "unexpected_shape");
});
