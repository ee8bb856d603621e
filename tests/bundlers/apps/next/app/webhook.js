// The webhook route of the Next.js app, shared by its edge and Node.js route handlers: verifies a delivery with
// `docauto/webhooks` (200 with the event id, 400 with the verifier's code), and reads a run through `docauto`
// (GET, against the suite's scripted server named by DOCAUTO_BASE_URL).
import { DocAuto } from "docauto";
import { WebhookVerifier } from "docauto/webhooks";
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

export async function readRun() {
  const client = new DocAuto({ apiKey: "sk_test_bundlers", baseUrl: process.env.DOCAUTO_BASE_URL, maxRetries: 0 });
  const run = await client.runs.retrieve("exr_1");
  return Response.json({ id: run.id, status: run.status });
}
