// The root entry (`docauto`, the API client alone) in every runtime of the suite: it loads its own module and a call
// round-trips through it. The `fetch` handed to DocAuto stands in for the network (the client rules are tested
// against scripted servers in tests/js/client/); here the point is the entry and its module in each runtime.
// `runClientEntry(docauto, log, { hangUrl })` prints one line per check and returns { passed, failed }. With `hangUrl`
// (a server that accepts requests and never answers, given by the browser runners) the runtime's own `fetch` is
// used for the timeout checks: engines reject an aborted `fetch` differently (WebKit with `AbortError` where
// Chromium and Firefox give `TimeoutError` for `AbortSignal.timeout`), and the client's errors must not depend on it.
import { Checks, assert } from "./suite.mjs";

export async function runClientEntry(docauto, log = console.log, { hangUrl } = {}) {
  const t = new Checks(log);
  const { DocAuto, APIError, APIConnectionError, APITimeoutError, APIUserAbortError, NotFoundError, validateExtractionSchema } = docauto;

  await t.run("docauto exports the API client alone: DocAuto and its errors, no verifier, transcriber or init", () => {
    for (const name of ["DocAuto", "APIError", "NotFoundError", "validateExtractionSchema"]) {
      assert(typeof docauto[name] === "function", `${name} is not exported`);
    }
    for (const name of ["WebhookVerifier", "WebhookVerificationError", "RealtimeTranscriber", "RealtimeError", "TestSigner"]) {
      assert(!(name in docauto), `${name} is exported by the root entry`);
    }
    assert(!("initSync" in docauto) && !("default" in docauto), "init machinery is exported");
  });

  const seen = [];
  const fetch = async (url, init) => {
    seen.push({ url, init });
    const json = (status, value) =>
      new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json", "x-request-id": "req_1" } });
    if (url.endsWith("/v1/runs/exr_1")) return json(200, { object: "extract_run", id: "exr_1", status: "processed" });
    return json(404, { code: "not_found", message: "no such run", retryable: false, requestId: "req_1" });
  };
  const client = new DocAuto({ apiKey: "sk_test_entry", baseUrl: "https://api.example", fetch, maxRetries: 0, dangerouslyAllowBrowser: true });

  await t.run("DocAuto.runs.retrieve round-trips through the module: GET with the bearer key, the run resolved", async () => {
    const run = await client.runs.retrieve("exr_1");
    assert(run.id === "exr_1" && run.status === "processed", `run ${JSON.stringify(run)}`);
    const { url, init } = seen.at(-1);
    assert(url === "https://api.example/v1/runs/exr_1", `url ${url}`);
    const auth = new Headers(init.headers).get("authorization");
    assert(auth === "Bearer sk_test_entry", "no bearer key sent");
  });

  await t.run("a 404 envelope rejects with NotFoundError, an APIError carrying code and request id", async () => {
    let caught;
    try {
      await client.runs.retrieve("exr_missing");
    } catch (e) {
      caught = e;
    }
    assert(caught instanceof NotFoundError && caught instanceof APIError, `got ${caught}`);
    assert(caught.code === "not_found" && caught.requestId === "req_1", `code ${caught.code} requestId ${caught.requestId}`);
  });

  await t.run("validateExtractionSchema refuses a $ref with invalid_schema", () => {
    let caught;
    try {
      validateExtractionSchema({ type: "object", properties: { a: { $ref: "#/x" } } });
    } catch (e) {
      caught = e;
    }
    assert(caught instanceof APIError && caught.code === "invalid_schema", `got ${caught}`);
  });

  if (hangUrl) {
    // What this engine's fetch does under AbortSignal.timeout (a fact of the engine, printed for the record).
    let engine = "resolved";
    try {
      await globalThis.fetch(`${hangUrl}/probe`, { signal: AbortSignal.timeout(100) });
    } catch (e) {
      engine = e?.name;
    }
    log(`     this engine's fetch under AbortSignal.timeout rejects with ${engine}`);
    const silent = new DocAuto({ apiKey: "sk_test_entry", baseUrl: hangUrl, maxRetries: 0, dangerouslyAllowBrowser: true });
    const failure = async (call) => {
      const started = Date.now();
      try {
        await call();
      } catch (e) {
        return { e, ms: Date.now() - started };
      }
      throw new Error("the call succeeded against a server that never answers");
    };

    await t.run("a request with no answer within timeoutMs rejects with APITimeoutError (the engine's fetch aborted)", async () => {
      const { e, ms } = await failure(() => silent.runs.retrieve("exr_1", { timeoutMs: 300 }));
      assert(e instanceof APITimeoutError && e instanceof APIConnectionError, `got ${e?.name} ${e?.code}: ${e?.message}`);
      assert(e.status === undefined, `status ${e.status}`);
      assert(ms >= 250 && ms < 5000, `rejected after ${ms} ms`);
    });

    await t.run("a caller's AbortSignal.timeout ends the call with APIUserAbortError, whatever the engine's fetch rejects with", async () => {
      const { e, ms } = await failure(() => silent.runs.retrieve("exr_1", { signal: AbortSignal.timeout(300) }));
      assert(e instanceof APIUserAbortError, `got ${e?.name} ${e?.code}: ${e?.message}`);
      assert(ms >= 250 && ms < 5000, `rejected after ${ms} ms`);
    });
  }
  return t;
}
