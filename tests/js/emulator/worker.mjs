// docauto/emulator inside a Cloudflare Worker (workerd, "workerd" condition; the .wasm files as compiled modules):
// the in-process flow, its webhook delivered by the Worker's fetch to the driver's receiver and verified with
// docauto/webhooks, deliveries to the Worker's own handler (`deliver`), realtime sessions over `emulator.WebSocket`;
// startEmulator refused. Four modules in one Worker, each with its own file name.
import { createEmulator, startEmulator } from "docauto/emulator";
import { DocAuto } from "docauto";
import { WebhookVerifier, WebhookVerificationError } from "docauto/webhooks";
import { RealtimeTranscriber } from "docauto/realtime";
import { checker, checkListenRefused, remoteReceiver, runInProcess } from "./flow.mjs";

export default {
  async fetch(request) {
    const base = new URL(request.url).searchParams.get("receiver");
    const lines = [];
    const { tally, check } = checker("workerd", (l) => lines.push(l));
    const receiver = remoteReceiver(base);
    await runInProcess({ DocAuto, WebhookVerifier, WebhookVerificationError, RealtimeTranscriber }, createEmulator, receiver, check);
    await checkListenRefused(startEmulator, check);
    return Response.json({ lines, ...tally });
  },
};
