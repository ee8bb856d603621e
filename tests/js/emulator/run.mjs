// docauto/emulator in Node, Deno or Bun, imported through the runtime's own condition: the full flow in-process
// (createEmulator) and on a socket (startEmulator, with the realtime WebSocket). It never calls process.exit: the
// driver (runtimes.mjs) requires the process to end by itself once everything is closed.
import { createEmulator, startEmulator } from "docauto/emulator";
import { DocAuto } from "docauto";
import { WebhookVerifier, WebhookVerificationError } from "docauto/webhooks";
import { RealtimeTranscriber } from "docauto/realtime";
import { checker, runInProcess, runListening } from "./flow.mjs";
import { startReceiver } from "./receiver.mjs";

const runtime = globalThis.Deno ? "deno" : globalThis.Bun ? "bun" : "node";
const { tally, check } = checker(runtime, (l) => console.log(l));
const mods = { DocAuto, WebhookVerifier, WebhookVerificationError, RealtimeTranscriber };
const WebSocketImpl = globalThis.WebSocket ?? (await import("ws")).WebSocket;
const receiver = await startReceiver();
try {
  await runInProcess(mods, createEmulator, receiver, check);
  await runListening(mods, startEmulator, WebSocketImpl, receiver, check);
} finally {
  await receiver.close();
}
console.log(`RESULT ${JSON.stringify({ suite: `docauto/emulator in ${runtime}`, ...tally })}`);
