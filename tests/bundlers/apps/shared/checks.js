// What every bundled app does with the five entries, in a page (Vite, webpack, esbuild) or in Node (esbuild): one real
// use of each entry's module. `api` is the suite's scripted server (run.mjs): it answers GET /v1/runs/exr_1 with a
// run, GET /v1/runs/exr_404 with the spec's 404 envelope, and GET /delivery with a delivery freshly signed by the
// suite's test key (public key set: ./jwks.js).
import { jwks } from "./jwks.js";

export async function runChecks(entries, api) {
  const {
    DocAuto,
    APIError,
    NotFoundError,
    validateExtractionSchema,
    WebhookVerifier,
    WebhookVerificationError,
    RealtimeTranscriber,
    TestSigner,
    TestingWebhookVerificationError,
    createEmulator,
  } = entries;
  const lines = [];
  let passed = 0;
  let failed = 0;
  const check = async (name, fn) => {
    try {
      await fn();
      passed++;
      lines.push(`ok   ${name}`);
    } catch (e) {
      failed++;
      // JavaScriptCore's `stack` holds the frames only: the name, code and message come first, or WebKit's failure
      // is a list of wasm frames without its cause.
      const head = e instanceof Error ? `${e.name}${e.code ? ` [${e.code}]` : ""}: ${e.message}` : String(e);
      const frames = e && e.stack ? String(e.stack).replace(`${e.name}: ${e.message}\n`, "") : "";
      lines.push(`FAIL ${name}: ${head}${frames ? `\n${frames}` : ""}`);
    }
  };
  const assert = (cond, msg) => {
    if (!cond) throw new Error(msg);
  };

  await check("docauto: DocAuto reads a run through the scripted server", async () => {
    const client = new DocAuto({ apiKey: "sk_test_bundlers", baseUrl: api, maxRetries: 0, dangerouslyAllowBrowser: true });
    const run = await client.runs.retrieve("exr_1");
    assert(run.id === "exr_1" && run.status === "processed", `run ${JSON.stringify(run)}`);
  });
  await check("docauto: a 404 envelope rejects with NotFoundError (an APIError) and its code", async () => {
    const client = new DocAuto({ apiKey: "sk_test_bundlers", baseUrl: api, maxRetries: 0, dangerouslyAllowBrowser: true });
    let caught;
    try {
      await client.runs.retrieve("exr_404");
    } catch (e) {
      caught = e;
    }
    assert(caught instanceof NotFoundError && caught instanceof APIError, `got ${caught}`);
    assert(caught.code === "not_found" && caught.status === 404, `code ${caught.code} status ${caught.status}`);
  });
  await check("docauto: validateExtractionSchema refuses $ref with invalid_schema", () => {
    let caught;
    try {
      validateExtractionSchema({ type: "object", properties: { a: { $ref: "#/x" } } });
    } catch (e) {
      caught = e;
    }
    assert(caught && caught.code === "invalid_schema", `got ${caught}`);
  });
  await check("docauto/webhooks: a signed delivery verifies, a tampered one is body_mismatch", async () => {
    const delivery = await (await fetch(`${api}/delivery`)).json();
    const verifier = new WebhookVerifier({ jwks });
    const event = await verifier.verify(delivery.body, delivery.signature);
    assert(event.eventId === delivery.eventId, `event ${JSON.stringify(event)}`);
    let caught;
    try {
      await verifier.verify(delivery.body.replace("exr_1", "exr_2"), delivery.signature);
    } catch (e) {
      caught = e;
    }
    assert(caught && caught.name === "WebhookVerificationError" && caught.code === "body_mismatch", `got ${caught}`);
  });
  await check("docauto/testing: a TestSigner event passes the docauto/webhooks verifier", async () => {
    const signer = await TestSigner.generate();
    const { body, signature } = await signer.sign({ type: "agent_run.waiting", processingId: "agr_1", data: {} });
    const event = await new WebhookVerifier({ jwks: signer.jwks }).verify(body, signature);
    assert(event.processingId === "agr_1", `event ${JSON.stringify(event)}`);
  });
  await check("docauto/webhooks and docauto/testing: an error either entry throws is instanceof the WebhookVerificationError both export", async () => {
    const signer = await TestSigner.generate();
    let fromVerifier;
    try {
      await new WebhookVerifier({ jwks: signer.jwks }).verify("{}", "not.a.token");
    } catch (e) {
      fromVerifier = e;
    }
    let fromSigner;
    try {
      await TestSigner.generate({ privateJwk: { kty: "oct" } });
    } catch (e) {
      fromSigner = e;
    }
    for (const [from, e] of [["docauto/webhooks", fromVerifier], ["docauto/testing", fromSigner]]) {
      const shown = `${from} threw ${e?.name} [${e?.code}]`;
      assert(e instanceof WebhookVerificationError, `${shown}: not instanceof docauto/webhooks' WebhookVerificationError`);
      assert(e instanceof TestingWebhookVerificationError, `${shown}: not instanceof docauto/testing's WebhookVerificationError`);
    }
  });
  await check("docauto/realtime: a transcriber takes a ticket URL and refuses an http one with a coded error", () => {
    const WebSocket = globalThis.WebSocket ?? class {};
    const transcriber = new RealtimeTranscriber({ url: "wss://realtime.example/v1/realtime/socket?ticket=t", WebSocket });
    assert(typeof transcriber.start === "function", "no start()");
    let caught;
    try {
      new RealtimeTranscriber({ url: "http://realtime.example/", WebSocket });
    } catch (e) {
      caught = e;
    }
    assert(caught && caught.name === "RealtimeError" && typeof caught.code === "string", `got ${caught}`);
  });
  await check("docauto/emulator: DocAuto through createEmulator's fetch lists the built-in agents, then close()", async () => {
    const emulator = createEmulator();
    try {
      const client = new DocAuto({
        apiKey: emulator.apiKey,
        baseUrl: emulator.url,
        fetch: emulator.fetch,
        dangerouslyAllowBrowser: true,
      });
      const agents = await client.agents.list();
      assert(agents.data.some((a) => a.id === "agt_contract_review"), `agents ${JSON.stringify(agents).slice(0, 200)}`);
    } finally {
      await emulator.close();
    }
  });
  return { passed, failed, lines };
}
