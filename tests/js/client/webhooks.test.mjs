// End to end against the emulator: webhook endpoints CRUD, deliveries, and the public key set.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { once } from "node:events";
import { WebhookVerifier, WebhookVerificationError } from "docauto/webhooks";
import { loadSdk, startEmulator, serveFiles, fetchSpy, rejectsWith, KEY } from "./harness.mjs";

const sdk = await loadSdk();
let emu;

before(async () => {
  emu = await startEmulator();
});
after(async () => {
  await emu?.stop();
});

test("webhook_endpoint_create_list_retrieve_update_deliveries_delete", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  const created = await client.webhooks.create({ url: "https://hooks.example.com/docauto", events: ["agent_run.completed"] });
  assert.match(created.id, /^whe_/);
  assert.equal(created.url, "https://hooks.example.com/docauto");
  assert.deepEqual(created.events, ["agent_run.completed"]);
  assert.equal(created.disabled, false);

  const list = await client.webhooks.list();
  assert.equal(list.object, "list");
  assert.ok(list.data.some((w) => w.id === created.id));

  const read = await client.webhooks.retrieve(created.id);
  assert.equal(read.id, created.id);

  const updated = await client.webhooks.update(created.id, { disabled: true, events: ["agent_run.failed"] });
  assert.equal(updated.disabled, true);
  assert.deepEqual(updated.events, ["agent_run.failed"]);

  const deliveries = await client.webhooks.deliveries(created.id);
  assert.equal(deliveries.object, "list");
  assert.ok(Array.isArray(deliveries.data));

  const gone = await client.webhooks.delete(created.id).withResponse();
  assert.equal(gone.data, undefined);
  assert.equal(gone.response.status, 204);
  await rejectsWith(assert, client.webhooks.retrieve(created.id), sdk.NotFoundError, "not_found");
});

test("webhook_validation_is_refused_before_sending", async () => {
  let sent = 0;
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: (u, i) => (sent++, fetch(u, i)) });
  await rejectsWith(assert, client.webhooks.create({ url: "http://hooks.example.com/x" }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, client.webhooks.update("whe_1", {}), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, client.webhooks.create({ url: "https://h.example", events: [""] }), sdk.BadRequestError, "invalid_request");
  assert.equal(sent, 0);
});

test("jwks_is_fetched_without_the_api_key", async () => {
  const { spy, calls } = fetchSpy();
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: spy });
  const jwks = await client.webhooks.jwks();
  assert.ok(jwks.keys.length >= 1);
  assert.equal(jwks.keys[0].kty, "EC");
  assert.equal(calls[0].headers.authorization, undefined);
  // The keys verify the emulator's signatures: a delivery the emulator signed passes a verifier holding only this
  // set, and the same delivery with one byte changed does not.
  const received = [];
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), signature: req.headers["x-svc-signature"] });
      res.writeHead(200);
      res.end();
    });
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  const docs = await serveFiles({ "/a.txt": { body: "Invoice 42. Total 99 EUR.", type: "text/plain" } });
  try {
    const api = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
    const endpoint = await api.webhooks.create({ url: `http://127.0.0.1:${receiver.address().port}/hook` });
    const run = await api.parse({ file: { url: `${docs.url}/a.txt` }, webhook: { id: endpoint.id } }, { wait: 60 });
    assert.ok(run.id);
    for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(received.length > 0, "the emulator delivered a signed event");
    const { body, signature } = received[0];
    assert.equal(typeof signature, "string");
    const verifier = new WebhookVerifier({ jwks });
    const event = await verifier.verify(body, signature);
    assert.equal(typeof event.type, "string");
    await assert.rejects(verifier.verify(body.replace(/.$/, " "), signature), WebhookVerificationError);
  } finally {
    receiver.close();
    await docs.close();
  }
});
