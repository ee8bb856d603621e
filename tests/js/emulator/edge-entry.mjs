// docauto/emulator inside Vercel's edge runtime (edge-runtime's VM, the "edge-light" condition, each .wasm a
// `?module` import compiled in the VM): the in-process flow, its webhook delivered by the runtime's fetch to the
// driver's receiver and verified with docauto/webhooks; startEmulator refused (an edge function cannot listen).
import { createEmulator, startEmulator } from "docauto/emulator";
import { DocAuto } from "docauto";
import { WebhookVerifier, WebhookVerificationError } from "docauto/webhooks";
import { RealtimeTranscriber } from "docauto/realtime";
import { checker, checkListenRefused, remoteReceiver, runInProcess } from "./flow.mjs";

globalThis.__docautoEmulatorSuite = async (base) => {
  const lines = [];
  const { tally, check } = checker("edge-runtime", (l) => lines.push(l));
  const receiver = remoteReceiver(base);
  try {
    await runInProcess({ DocAuto, WebhookVerifier, WebhookVerificationError, RealtimeTranscriber }, createEmulator, receiver, check);
  } catch (e) {
    check("the flow ran to its end", false, String(e?.stack ?? e));
  }
  await checkListenRefused(startEmulator, check);
  return JSON.stringify({ lines, ...tally });
};
