// What moves between Node lines under the client (`cargo xtask test` runs this file on the machine's Node and on each
// pinned line of tests/node-lines): how undici fails a `fetch` (its `cause.code`, from which the client tells a request
// never sent from one whose answer was lost), and the abort listeners a shared signal collects (Node 20 warns from the
// 11th on one signal, Node 22 and later do not). The oracle is a raw `node:net` server: it does exactly one thing to
// the connection, so what was sent is known.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { once } from "node:events";
import { loadSdk, KEY } from "./harness.mjs";

const sdk = await loadSdk();
const servers = [];
after(async () => {
  for (const s of servers) await s.close();
});

/**
 * A raw TCP server: `onRequest(socket)` runs once the first request bytes arrive (or at accept when `atAccept`).
 * Resolves to `{ url, requests, close() }`; `requests` counts the connections that sent bytes.
 */
async function raw(onRequest, { atAccept = false } = {}) {
  const sockets = new Set();
  const handle = { requests: 0 };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    if (atAccept) return onRequest(socket);
    socket.once("data", () => {
      handle.requests += 1;
      onRequest(socket);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  handle.url = `http://127.0.0.1:${server.address().port}`;
  handle.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  servers.push(handle);
  return handle;
}

/** A `fetch` that counts its calls and records each rejection's code (undici's `cause.code`, else its message). */
function recordingFetch() {
  const seen = { calls: 0, codes: [] };
  seen.fetch = (url, init) => {
    seen.calls += 1;
    return fetch(url, init).catch((e) => {
      seen.codes.push(e?.cause?.code ?? e?.cause?.message ?? e?.message);
      throw e;
    });
  };
  return seen;
}

/** `webhooks.create` (a write the service does not dedupe) with one retry allowed; resolves to its error. */
function createWebhook(url, seen) {
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: url, fetch: seen.fetch, maxRetries: 1, logLevel: "off" });
  return client.webhooks.create({ url: "https://hooks.example.com/x" }).then(
    () => assert.fail("resolved"),
    (e) => e,
  );
}

// Each way a connection can fail, what the client must conclude. "never sent": resent (the write cannot have been
// applied), `outcomeUnknown: false`. "maybe applied": sent once, `outcomeUnknown: true`. Node 20 to 26 give the same
// codes, except a malformed answer: `HPE_INVALID_CONSTANT` up to Node 22, no code from Node 24 on (undici 7).
const FAILURES = [
  ["the connection is refused", "never sent", null],
  ["the server closes the connection after reading the request", "maybe applied", (s) => s.end()],
  ["the server resets the connection after reading the request", "maybe applied", (s) => s.resetAndDestroy()],
  ["the server resets the connection as it accepts it", "maybe applied", (s) => s.resetAndDestroy(), { atAccept: true }],
  ["the answer stops in its headers", "maybe applied", (s) => s.end("HTTP/1.1 200 OK\r\nContent-Len")],
  ["the answer is not HTTP", "maybe applied", (s) => s.end("garbage\r\n\r\n")],
];

for (const [what, outcome, onRequest, options] of FAILURES) {
  test(`when_${what.replaceAll(" ", "_")}_a_write_is_${outcome === "never sent" ? "resent" : "sent_once_with_outcome_unknown"}`, async () => {
    let url;
    if (onRequest) {
      url = (await raw(onRequest, options)).url;
    } else {
      const closed = await raw(() => {});
      url = closed.url;
      await closed.close();
    }
    const seen = recordingFetch();
    const error = await createWebhook(url, seen);
    const codes = `${process.version}: fetch failed with ${JSON.stringify(seen.codes)}`;
    assert.ok(error instanceof sdk.APIConnectionError, `${error?.name}: ${error?.message} (${codes})`);
    assert.equal(error.outcomeUnknown, outcome !== "never sent", codes);
    assert.equal(seen.calls, outcome === "never sent" ? 2 : 1, codes);
  });
}

// Port 9 (discard) is a "bad port" of the Fetch standard: undici refuses it before opening any connection ("fetch
// failed", cause "bad port", no code), so nothing can have been applied.
test("when_the_port_is_one_fetch_blocks_a_write_is_resent_with_its_outcome_known", async () => {
  const seen = recordingFetch();
  const error = await createWebhook("http://127.0.0.1:9", seen);
  const codes = `${process.version}: fetch failed with ${JSON.stringify(seen.codes)}`;
  assert.ok(error instanceof sdk.APIConnectionError, `${error?.name}: ${error?.message} (${codes})`);
  assert.equal(error.outcomeUnknown, false, `${error.message} (${codes})`);
  assert.equal(seen.calls, 2, codes);
});

/**
 * Wraps `signal`'s `addEventListener`/`removeEventListener` to count the "abort" listeners on it at once (`max`)
 * and at the end (`live`); each listener is registered as itself, wrapped (no listener of the count's own).
 */
function countListeners(signal) {
  const count = { live: 0, max: 0 };
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  const wrapped = new Map();
  signal.addEventListener = (type, listener, opts) => {
    if (type !== "abort" || typeof listener !== "function" || wrapped.has(listener)) return add(type, listener, opts);
    const w = function (...args) {
      if (opts?.once && wrapped.delete(listener)) count.live -= 1;
      return listener.apply(this, args);
    };
    wrapped.set(listener, w);
    count.live += 1;
    count.max = Math.max(count.max, count.live);
    return add(type, w, opts);
  };
  signal.removeEventListener = (type, listener, opts) => {
    const w = type === "abort" ? wrapped.get(listener) : undefined;
    if (!w) return remove(type, listener, opts);
    wrapped.delete(listener);
    count.live -= 1;
    return remove(type, w, opts);
  };
  return count;
}

/** The process's warnings from now on (Node prints them too). */
function collectWarnings() {
  const warnings = [];
  const onWarning = (w) => warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  return {
    warnings,
    async stop() {
      // A warning is emitted on the next tick.
      await new Promise((r) => setTimeout(r, 20));
      process.off("warning", onWarning);
    },
  };
}

/** A server that answers every request after `ms` with an empty list page. */
function slowList(ms) {
  return raw((s) =>
    setTimeout(() => {
      const body = JSON.stringify({ object: "list", data: [], hasMore: false });
      s.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    }, ms),
  );
}

test("twenty_concurrent_calls_sharing_one_signal_put_one_abort_listener_on_it_and_node_warns_of_no_leak", async () => {
  const server = await slowList(200);
  const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: server.url, logLevel: "off" });
  const controller = new AbortController();
  const count = countListeners(controller.signal);
  const watch = collectWarnings();
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => client.agents.list({ signal: controller.signal })));
  await watch.stop();
  assert.deepEqual(results.map((r) => r.status), Array(20).fill("fulfilled"), String(results.find((r) => r.reason)?.reason));
  assert.equal(server.requests, 20);
  assert.deepEqual(watch.warnings, [], `${process.version}: the calls made Node warn`);
  assert.equal(count.max, 1, "listeners on the caller's signal at once");
  assert.equal(count.live, 0, "listeners left on the caller's signal after the calls");
});

test("aborting_a_signal_shared_by_calls_in_flight_and_calls_waiting_to_retry_ends_each_with_user_abort_error", async () => {
  const hanging = await raw(() => {});
  const limited = await raw((s) => s.end("HTTP/1.1 429 Too Many Requests\r\nretry-after: 5\r\ncontent-length: 0\r\n\r\n"));
  const controller = new AbortController();
  const count = countListeners(controller.signal);
  const watch = collectWarnings();
  const calls = [hanging, limited].flatMap((server) => {
    const client = new sdk.DocAuto({ apiKey: KEY, baseUrl: server.url, maxRetries: 2, logLevel: "off" });
    return Array.from({ length: 10 }, () => client.agents.list({ signal: controller.signal }));
  });
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  controller.abort();
  const results = await Promise.allSettled(calls);
  await watch.stop();
  assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms after the abort`);
  for (const r of results) {
    assert.equal(r.status, "rejected");
    assert.ok(r.reason instanceof sdk.APIUserAbortError, `${r.reason?.name}: ${r.reason?.message}`);
  }
  assert.equal(hanging.requests, 10);
  assert.equal(limited.requests, 10, "each waiting call was sent once and not resent after the abort");
  assert.deepEqual(watch.warnings, [], `${process.version}: the calls made Node warn`);
  assert.equal(count.live, 0, "listeners left on the caller's signal");
});
