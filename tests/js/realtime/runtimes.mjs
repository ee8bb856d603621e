// `sendAudio` in server runtimes against the emulator: Node (its global WebSocket from Node 22 on, the `ws` package
// in Node 20, which has none), Deno and Bun (their global WebSocket). Each runs send-tone.mjs with a fresh session URL,
// under the Node that runs this file.
//
// Run: `node tests/js/realtime/runtimes.mjs [--only node]` (pkg/ or DOCAUTO_GLUE_DIR; the emulator or
// DOCAUTO_EMULATOR).
import { execFile } from "node:child_process";
import { join } from "node:path";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ROOT, startEmulator, createSession, runner, sdkLocation } from "./harness.mjs";
import { onlyRuntimes, readWasmIn } from "../common.mjs";

const bin = (b) => join(ROOT, "node_modules", ".bin", b);
const script = join(ROOT, "tests", "js", "realtime", "send-tone.mjs");
const ALL = [
  ["node", process.execPath, []],
  ["deno", bin("deno"), ["run", "--allow-read", "--allow-net", "--allow-env"]],
  ["bun", bin("bun"), []],
];
const only = onlyRuntimes(ALL.map(([name]) => name));
const RUNTIMES = ALL.filter(([name]) => only.includes(name));

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: ROOT, timeout: 60_000, env: { ...process.env, DENO_NO_UPDATE_CHECK: "1" } }, (e, out, err) => {
      if (e) return reject(new Error(`${e.message}\n${err}`));
      const line = out.trim().split("\n").at(-1);
      resolve(JSON.parse(line));
    });
  });
}

/** This Node's major version (the line `cargo xtask test` runs this file on). */
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);

const r = runner();
const emulator = await startEmulator();
for (const [name, cmd, pre] of RUNTIMES) {
  await r.test(`${name}_send_audio_reaches_the_service_and_gets_a_final_and_usage`, async () => {
    const session = await createSession(emulator.baseUrl);
    const got = await run(cmd, [...pre, script, session.url]);
    const types = got.events.map((e) => e.type);
    assert.equal(types[0], "open", JSON.stringify(got));
    assert.ok(types.includes("partial") && types.includes("final"), JSON.stringify(types));
    assert.equal(types.at(-1), "close");
    assert.ok(!types.includes("error"), JSON.stringify(got.events));
    assert.deepEqual(got.usage, { startedMinutes: 1, credits: 7 });
    assert.equal(got.state, "closed");
    // Deno, Bun and Node from 22 on have a global WebSocket, which the transcriber takes when given none.
    const global = name !== "node" || NODE_MAJOR >= 22;
    assert.equal(got.injected, !global, `${name} ${process.version}: ${global ? "its global WebSocket" : "ws"} expected`);
  });
}
// A scripted server (not the emulator): a text message past the 256 KiB limit is refused unread with
// `invalid_message`, and the session goes on (the final after it arrives).
await r.test("node_a_message_over_256_KiB_is_refused_unread_and_the_session_goes_on", async () => {
  const { WebSocketServer, WebSocket } = await import("ws");
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  server.on("connection", (socket) => {
    socket.send(JSON.stringify({ type: "open", sessionId: "rts_1", sampleRate: 16000 }));
    socket.send(JSON.stringify({ type: "partial", text: "a".repeat(300 * 1024), start: 0, end: 1 }));
    socket.send(JSON.stringify({ type: "final", text: "after", start: 0, end: 2 }));
    socket.on("message", (data, binary) => {
      if (!binary && JSON.parse(String(data)).type === "stop") socket.close(1000);
    });
  });
  const loc = sdkLocation("node");
  const sdk = await import(pathToFileURL(join(loc.dir, loc.entry)).href);
  if (loc.glue) sdk.initSync({ module: readWasmIn(loc.dir) });
  const { RealtimeTranscriber } = sdk;
  const url = `ws://127.0.0.1:${server.address().port}/s`;
  const t = new RealtimeTranscriber({ url, WebSocket });
  const events = [];
  let sawFinal;
  const final = new Promise((resolve) => (sawFinal = resolve));
  for (const k of ["partial", "final", "error"]) {
    t.addEventListener(k, (e) => {
      events.push({ type: k, code: e.detail?.code, length: e.detail?.text?.length });
      if (k === "final") sawFinal();
    });
  }
  try {
    await t.start({ microphone: false });
    await final;
    await t.stop();
  } finally {
    server.close();
  }
  assert.deepEqual(events, [
    { type: "error", code: "invalid_message", length: undefined },
    { type: "final", code: undefined, length: 5 },
  ]);
});
// Node 22 and later have a global WebSocket: the transcriber needs no `WebSocket` option there. Node 20 has none: the
// constructor refuses with `invalid_options` naming the option, not a ReferenceError later.
await r.test(`node_${NODE_MAJOR}_without_a_WebSocket_option_${NODE_MAJOR >= 22 ? "takes_the_global_one" : "is_refused_naming_the_option"}`, async () => {
  const loc = sdkLocation("node");
  const sdk = await import(pathToFileURL(join(loc.dir, loc.entry)).href);
  if (loc.glue) sdk.initSync({ module: readWasmIn(loc.dir) });
  const url = "ws://127.0.0.1:9/v1/realtime/socket?ticket=t";
  if (NODE_MAJOR >= 22) {
    assert.equal(typeof globalThis.WebSocket, "function");
    assert.equal(typeof new sdk.RealtimeTranscriber({ url }).start, "function");
  } else {
    assert.equal(typeof globalThis.WebSocket, "undefined", `${process.version} has a global WebSocket`);
    assert.throws(() => new sdk.RealtimeTranscriber({ url }), (e) => {
      assert.ok(e instanceof sdk.RealtimeError, String(e));
      assert.equal(e.code, "invalid_options");
      assert.match(e.message, /WebSocket/);
      return true;
    });
  }
});

// The lifetime of a live session in Node, against a scripted `ws` server that opens the session and then sends a
// partial every 20 ms for as long as the socket lives: Node 20 gives the transcriber `ws`' WebSocket, later lines their
// global one (the transcriber's default). Uncaught exceptions are counted (a handler called after its Rust side was
// freed throws "closure invoked ... after being dropped" from the socket's event).
async function chattyServer() {
  const { WebSocketServer } = await import("ws");
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const closes = [];
  const clients = new Set();
  server.on("connection", (socket) => {
    clients.add(socket);
    socket.send(JSON.stringify({ type: "open", sessionId: "rts_1", sampleRate: 16000 }));
    let n = 0;
    const timer = setInterval(() => {
      n += 1;
      socket.send(JSON.stringify({ type: "partial", text: `p${n}`, start: 0, end: n / 50 }));
    }, 20);
    socket.on("close", (code) => {
      clearInterval(timer);
      clients.delete(socket);
      closes.push(code);
    });
  });
  return {
    url: `ws://127.0.0.1:${server.address().port}/s`,
    closes,
    /** The service ends the session normally (1000), as after a `stop`. */
    endAll: () => { for (const c of clients) c.close(1000); },
    async stop() {
      for (const c of clients) c.terminate();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function realtimeSdk() {
  const loc = sdkLocation("node");
  const sdk = await import(pathToFileURL(join(loc.dir, loc.entry)).href);
  if (loc.glue) sdk.initSync({ module: readWasmIn(loc.dir) });
  return sdk;
}

/** The transcriber's options for `url` on this Node line: `ws`' WebSocket on Node 20, the global one later. */
async function nodeOptions(url) {
  return NODE_MAJOR >= 22 ? { url } : { url, WebSocket: (await import("ws")).WebSocket };
}

/** Runs `fn` with uncaught exceptions and unhandled rejections collected in `errors` instead of ending Node. */
async function catchingUncaught(fn) {
  const errors = [];
  const onError = (e) => errors.push(String(e?.message ?? e));
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onError);
  try {
    return await fn(errors);
  } finally {
    process.off("uncaughtException", onError);
    process.off("unhandledRejection", onError);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

await r.test(`node_${NODE_MAJOR}_free_mid_session_closes_the_socket_with_1000_and_nothing_calls_the_freed_transcriber`, async () => {
  const server = await chattyServer();
  try {
    await catchingUncaught(async (errors) => {
      const { RealtimeTranscriber } = await realtimeSdk();
      const t = new RealtimeTranscriber(await nodeOptions(server.url));
      const events = [];
      for (const k of ["partial", "error", "close"]) t.addEventListener(k, () => events.push(k));
      await t.start({ microphone: false });
      while (events.length < 5) await sleep(10);
      t.free();
      const at = events.length;
      const freedAt = Date.now();
      while (server.closes.length === 0 && Date.now() - freedAt < 1500) await sleep(10);
      await sleep(300); // what a live socket would still deliver
      assert.deepEqual(server.closes, [1000], "the service saw no normal close within 1.5 s of free()");
      assert.deepEqual(events.slice(at), [], "events after free()");
      assert.deepEqual(errors, []);
    });
  } finally {
    await server.stop();
  }
});

await r.test(`node_${NODE_MAJOR}_a_live_session_is_never_collected_and_a_closed_one_is`, async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const collect = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await sleep(20); // WeakRef targets stay for the job that made them; finalizers run in a later task
    }
  };
  const server = await chattyServer();
  try {
    await catchingUncaught(async (errors) => {
      const { RealtimeTranscriber } = await realtimeSdk();
      const seen = { partials: 0, closes: 0, errors: 0 };
      // The page keeps nothing but a WeakRef: the transcriber is unreachable from here once this returns.
      const ref = await (async () => {
        const t = new RealtimeTranscriber(await nodeOptions(server.url));
        t.addEventListener("partial", () => seen.partials++);
        t.addEventListener("close", () => seen.closes++);
        t.addEventListener("error", () => seen.errors++);
        await t.start({ microphone: false });
        return new WeakRef(t);
      })();
      await sleep(100);
      await collect();
      const before = seen.partials;
      await sleep(300);
      assert.ok(ref.deref() !== undefined, "the live transcriber was collected");
      assert.ok(seen.partials >= before + 5, `${seen.partials - before} partials in 300 ms after a collection`);
      assert.deepEqual(errors, []);
      // Closed, it is collected even when a listener of its own refers to it (a cycle through the listeners).
      await (async () => {
        const t = ref.deref();
        t.addEventListener("close", () => (seen.closedState = t.state));
      })();
      server.endAll();
      while (seen.closes === 0) await sleep(10);
      await collect();
      assert.equal(seen.closedState, "closed");
      assert.equal(ref.deref(), undefined, "the closed transcriber is still held");
      assert.equal(seen.errors, 0);
      assert.deepEqual(errors, []);
    });
  } finally {
    await server.stop();
  }
});
await emulator.stop();
process.exitCode = r.summary("realtime runtimes") ? 0 : 1;
