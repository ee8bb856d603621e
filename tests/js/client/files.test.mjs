// End to end against the emulator: files by URL and by upload (the PUT never carries the API key).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadSdk, startEmulator, serveFiles, fetchSpy, rejectsWith, KEY } from "./harness.mjs";

const sdk = await loadSdk();
let emu, docs;

before(async () => {
  emu = await startEmulator();
  docs = await serveFiles({ "/note.txt": { body: "Delivery note 7: 3 pallets.", type: "text/plain" } });
});
after(async () => {
  await emu?.stop();
  await docs?.close();
});

test("create_by_url_then_wait_until_ready", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  const file = await client.files.create({ url: `${docs.url}/note.txt`, name: "note.txt" });
  assert.ok(file.id);
  const ready = await client.files.waitUntilReady(file.id);
  assert.equal(ready.id, file.id);
  assert.equal(ready.status, "ready");
  const again = await client.files.retrieve(file.id);
  assert.equal(again.status, "ready");
});

test("upload_puts_bytes_without_authorization_and_waits_until_ready", async () => {
  const { spy, calls } = fetchSpy();
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: spy });
  const data = new TextEncoder().encode("Purchase order 9: 12 chairs.");
  const file = await client.files.upload({ name: "po.txt", mimeType: "text/plain", data });
  assert.equal(file.status, "ready");
  const put = calls.find((c) => c.method === "PUT");
  assert.ok(put, "the bytes were PUT");
  assert.equal(put.headers.authorization, undefined, "the upload PUT carries no Authorization header");
  assert.equal(put.headers["content-type"], "text/plain");
  const register = calls.find((c) => c.method === "POST");
  assert.equal(register.headers.authorization, `Bearer ${KEY}`);
  assert.ok(register.headers["idempotency-key"]);
});

test("upload_accepts_string_arraybuffer_and_blob", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  for (const data of ["plain text", new TextEncoder().encode("bytes").buffer, new Blob(["blob"])]) {
    const file = await client.files.upload({ name: "x.txt", mimeType: "text/plain", data });
    assert.equal(file.status, "ready");
  }
});

test("upload_validation_is_refused_before_sending", async () => {
  let sent = 0;
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, fetch: (u, i) => (sent++, fetch(u, i)) });
  await rejectsWith(assert, client.files.upload({ name: "a", mimeType: "text/plain", data: 42 }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, client.files.upload({ name: "a", mimeType: "nonsense", data: "x" }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, client.files.upload({ name: "", mimeType: "text/plain", data: "x" }), sdk.BadRequestError, "invalid_request");
  await rejectsWith(assert, client.files.create({ url: "ftp://x/y" }), sdk.BadRequestError, "invalid_request");
  assert.equal(sent, 0);
});

test("service_error_rows_of_files", async () => {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: emu.baseUrl, logLevel: "off" });
  await rejectsWith(assert, client.files.retrieve("file_missing"), sdk.NotFoundError, "not_found");
  await rejectsWith(assert, client.files.create({ url: `${docs.url}/missing.txt` }), sdk.UnprocessableEntityError, "file_fetch_failed");
});
