// The root entry (`docauto`, the API client alone) in every runtime of the suite: it loads its own module and a call
// round-trips through it. The `fetch` handed to DocAuto stands in for the network (the client rules are tested
// against scripted servers in tests/js/client/); here the point is the entry and its module in each runtime.
// `runClientEntry(docauto, log)` prints one line per check and returns { passed, failed }.
import { Checks, assert } from "./suite.mjs";

export async function runClientEntry(docauto, log = console.log) {
  const t = new Checks(log);
  const { DocAuto, APIError, NotFoundError, validateExtractionSchema } = docauto;

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
  return t;
}
