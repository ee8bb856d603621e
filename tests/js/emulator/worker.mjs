// docauto/emulator inside a Cloudflare Worker (workerd, "workerd" condition; the .wasm files as compiled modules):
// the in-process flow, its webhook delivered by the Worker's fetch to the driver's receiver; startEmulator refused.
// (The verifier comes from the root entry here: in one bundle the root's and docauto/webhooks' .wasm files still
// share a name until the package gives every module its own.)
import { createEmulator, startEmulator } from "docauto/emulator";
import { DocAuto, WebhookVerifier, WebhookVerificationError } from "docauto";
import { checker, runInProcess } from "./flow.mjs";

export default {
  async fetch(request) {
    const base = new URL(request.url).searchParams.get("receiver");
    const lines = [];
    const { tally, check } = checker("workerd", (l) => lines.push(l));
    const receiver = { url: `${base}/hook`, hits: async () => (await fetch(`${base}/hits`)).json() };
    await runInProcess({ DocAuto, WebhookVerifier, WebhookVerificationError }, createEmulator, receiver, check);
    let refused;
    try {
      await startEmulator();
    } catch (e) {
      refused = e;
    }
    check("startEmulator rejects with listen_unavailable", refused?.code === "listen_unavailable", String(refused));
    return Response.json({ lines, ...tally });
  },
};
