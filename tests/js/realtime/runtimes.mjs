// `sendAudio` in server runtimes against the emulator: Node (with the `ws` package where there is no global
// WebSocket), Deno and Bun (their global WebSocket). Each runs send-tone.mjs with a fresh session URL.
//
// Run: `node tests/js/realtime/runtimes.mjs` (pkg/ or DOCAUTO_GLUE_DIR; the emulator or DOCAUTO_EMULATOR).
import { execFile } from "node:child_process";
import { join } from "node:path";
import assert from "node:assert/strict";
import { ROOT, startEmulator, createSession, runner } from "./harness.mjs";

const bin = (b) => join(ROOT, "node_modules", ".bin", b);
const script = join(ROOT, "tests", "js", "realtime", "send-tone.mjs");
const RUNTIMES = [
  ["node", process.execPath, []],
  ["deno", bin("deno"), ["run", "--allow-read", "--allow-net", "--allow-env"]],
  ["bun", bin("bun"), []],
];

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: ROOT, timeout: 60_000, env: { ...process.env, DENO_NO_UPDATE_CHECK: "1" } }, (e, out, err) => {
      if (e) return reject(new Error(`${e.message}\n${err}`));
      const line = out.trim().split("\n").at(-1);
      resolve(JSON.parse(line));
    });
  });
}

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
    if (name !== "node") assert.equal(got.injected, false, `${name} should use its global WebSocket`);
  });
}
await emulator.stop();
process.exitCode = r.summary("realtime runtimes") ? 0 : 1;
