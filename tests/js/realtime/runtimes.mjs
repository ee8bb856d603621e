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
await emulator.stop();
process.exitCode = r.summary("realtime runtimes") ? 0 : 1;
