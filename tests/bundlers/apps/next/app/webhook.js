// The webhook route of the Next.js app, shared by its edge and Node.js route handlers: verifies a delivery with
// `docauto/webhooks` (200 with the event id, 400 with the verifier's code), and reads a run through `docauto`
// (GET, against the suite's scripted server named by DOCAUTO_BASE_URL), or, with `?emulator`, lists the agents of an
// in-process `docauto/emulator`.
import { DocAuto } from "docauto";
import { WebhookVerifier } from "docauto/webhooks";
import { createEmulator } from "docauto/emulator";
import { jwks } from "../../shared/jwks.js";

let verifier; // one per instance: the key set stays parsed between requests

export async function receive(request) {
  verifier ??= new WebhookVerifier({ jwks });
  try {
    const event = await verifier.verifyRequest(request);
    return Response.json({ received: event.eventId });
  } catch (err) {
    if (err.name !== "WebhookVerificationError") throw err;
    return Response.json({ error: err.code }, { status: 400 });
  }
}

/** `docauto/emulator` in the route: DocAuto through an in-process emulator lists its agents. */
export async function emulated() {
  const emulator = createEmulator();
  try {
    const client = new DocAuto({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, maxRetries: 0 });
    const agents = await client.agents.list();
    return Response.json({ agents: agents.data.map((a) => a.id) });
  } finally {
    await emulator.close();
  }
}

export async function readRun(request) {
  if (new URL(request.url).searchParams.has("emulator")) return emulated();
  const client = new DocAuto({ apiKey: "sk_test_bundlers", baseUrl: process.env.DOCAUTO_BASE_URL, maxRetries: 0 });
  const run = await client.runs.retrieve("exr_1");
  return Response.json({ id: run.id, status: run.status });
}
