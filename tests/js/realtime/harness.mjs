// Shared setup of the realtime tests: where the SDK is, the emulator, a speech WAV, the shared checks.
//
// The SDK comes from pkg/ (built by `cargo xtask build`; another package folder with DOCAUTO_PKG_DIR): its
// `docauto/realtime` entry (pkg/realtime/), else its main entry when it exports RealtimeTranscriber, or from a folder of `wasm-bindgen --target web` output named by DOCAUTO_GLUE_DIR.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, KEY, startEmulator as startClientEmulator } from "../client/harness.mjs";
import { Checks } from "../suite.mjs";
import { report } from "../common.mjs";

export { ROOT, KEY };

/**
 * `{ dir, entry, glue }`: the SDK folder (served as /sdk/ to the browser), the module to import from it (the
 * package's `index.js` for browsers, `node.js` for Node), and whether it is raw glue needing `init`/`initSync`.
 */
export function sdkLocation(runtime = "browser") {
  const glue = process.env.DOCAUTO_GLUE_DIR;
  if (glue) return { dir: glue, entry: "docauto.js", glue: true };
  const pkg = process.env.DOCAUTO_PKG_DIR ?? join(ROOT, "pkg");
  // The package's live-transcription entry (`docauto/realtime`: the transcriber alone) when it has one.
  const realtime = join(pkg, "realtime", "index.js");
  if (existsSync(realtime) && readFileSync(realtime, "utf8").includes("RealtimeTranscriber")) {
    return { dir: pkg, entry: runtime === "node" ? "realtime/node.js" : "realtime/index.js", glue: false };
  }
  const index = join(pkg, "index.js");
  if (existsSync(index) && readFileSync(index, "utf8").includes("RealtimeTranscriber")) {
    return { dir: pkg, entry: runtime === "node" ? "node.js" : "index.js", glue: false };
  }
  throw new Error("pkg/ has no RealtimeTranscriber: run `cargo xtask build` or set DOCAUTO_GLUE_DIR");
}

/**
 * Starts the emulator (the client suites' launcher) at real time: its `--time-scale 0.01` would also shrink the
 * realtime idle limit (30 s) to 0.3 s.
 */
export function startEmulator() {
  return startClientEmulator(["--time-scale", "1"]);
}

/** Creates a realtime session with the API key (server side only). */
export async function createSession(baseUrl, body = {}) {
  const r = await fetch(`${baseUrl}/v1/realtime/transcriptions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`session creation: ${r.status} ${await r.text()}`);
  return r.json();
}

/**
 * A speech WAV made now by espeak-ng and sox: two sentences, each followed by 2.5 s of silence, 48 kHz mono PCM16
 * (the emulator closes a segment after 1.5 s of silence, so each sentence gives a `final`).
 */
export function speechWav() {
  const dir = mkdtempSync(join(tmpdir(), "docauto-rt-"));
  const a = join(dir, "a.wav");
  const b = join(dir, "b.wav");
  const out = join(dir, "speech.wav");
  execFileSync("espeak-ng", ["-w", a, "Live transcription works in the browser today."]);
  execFileSync("espeak-ng", ["-w", b, "The second sentence comes after a short pause."]);
  const a2 = join(dir, "a2.wav");
  const b2 = join(dir, "b2.wav");
  execFileSync("sox", [a, "-r", "48000", "-c", "1", "-b", "16", a2, "pad", "0.3", "2.5"]);
  execFileSync("sox", [b, "-r", "48000", "-c", "1", "-b", "16", b2, "pad", "0", "2.5"]);
  execFileSync("sox", [a2, b2, out]);
  return out;
}

/** The shared `Checks` with a summary: `summary(suite)` prints the RESULT line and `N passed, N failed`. */
export function runner() {
  const checks = new Checks(console.log);
  return {
    test: (name, fn) => checks.run(name, fn),
    summary(suite) {
      report(suite, checks);
      console.log(`${checks.passed} passed, ${checks.failed} failed`);
      return checks.failed === 0;
    },
  };
}
