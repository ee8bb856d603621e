// End to end against the emulator: webhook endpoints CRUD, deliveries, and the public key set.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadSdk, startEmulator, fetchSpy, rejectsWith, KEY } from "./harness.mjs";

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
  // The keys verify the emulator's signatures: the WebhookVerifier accepts them as a static set.
  assert.ok(new sdk.WebhookVerifier({ jwks }));
});
