// Child script of runtimes.mjs, run by Node, Deno or Bun: `sendAudio` without a microphone, through the runtime's
// own WebSocket (Node 20 has none: there the `ws` package is passed as the `WebSocket` option). Prints one JSON line.
import { existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { readWasmIn } from "../common.mjs";
import { sendTone } from "./tone.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const [url] = process.argv.slice(2).filter((a) => a.startsWith("ws"));

async function sdk() {
  const glue = process.env.DOCAUTO_GLUE_DIR;
  if (glue) {
    const mod = await import(pathToFileURL(join(glue, "docauto.js")).href);
    mod.initSync({ module: readWasmIn(glue) });
    return mod;
  }
  const pkg = process.env.DOCAUTO_PKG_DIR ?? join(root, "pkg");
  // The `docauto/realtime` entry (the transcriber alone) when the package has one, else the main entry.
  const dir = existsSync(join(pkg, "realtime", "node.js")) ? join(pkg, "realtime") : pkg;
  return import(pathToFileURL(join(dir, typeof Deno === "object" ? "deno.js" : "node.js")).href);
}

const { RealtimeTranscriber } = await sdk();
const options = { url, frameMs: 20 };
if (typeof globalThis.WebSocket !== "function") options.WebSocket = (await import("ws")).WebSocket;
const t = new RealtimeTranscriber(options);
const events = [];
for (const k of ["open", "partial", "final", "usage", "error", "close"]) {
  t.addEventListener(k, (e) => events.push({ type: k, code: e.detail?.code, text: e.detail?.text }));
}
await t.start({ microphone: false });
sendTone(t);
await t.stop();
console.log(JSON.stringify({ usage: t.usage, state: t.state, events, injected: "WebSocket" in options }));
