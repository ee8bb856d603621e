// Type-checked with `tsc --strict` (tests/types/tsconfig.json) against the built package: the README's "Testing your
// webhook handler" example with the real types of `docauto/testing`. Never executed.
import {
  TestSigner,
  WebhookVerificationError,
  type JsonWebKey,
  type JsonWebKeySet,
  type SignedTestEvent,
  type TestEvent,
  type TestSignerOptions,
} from "docauto/testing";
import { WebhookVerifier, type VerifiedWebhookEvent, type WebhookErrorCode } from "docauto/webhooks";

export async function handlerTest(handler: (request: Request) => Promise<Response>): Promise<number> {
  const signer: TestSigner = await TestSigner.generate();
  const jwks: JsonWebKeySet = signer.jwks;
  const verifier = new WebhookVerifier({ jwks });
  const event: TestEvent = { type: "agent_run.completed", processingId: "agr_1", data: { object: "agent_run" } };
  const { body, signature }: SignedTestEvent = await signer.sign(event);
  const verified: VerifiedWebhookEvent = await verifier.verify(body, signature);
  const request: Request = await signer.request("https://my.app/hooks", event);
  const response = await handler(request);
  return response.status + verified.eventId.length;
}

export async function fixedSigner(saved: JsonWebKey): Promise<string> {
  const options: TestSignerOptions = { kid: "fixture", now: () => 1_800_000_000, privateJwk: saved };
  const signer = await TestSigner.generate(options);
  const fixed = await TestSigner.generate({ now: 1_800_000_000 });
  const key: JsonWebKey = fixed.privateJwk;
  // Any event type string is accepted (the API adds types), the known ones autocomplete.
  await signer.sign({ type: "my.custom_event", processingId: "p", eventId: "evt_1", occurredAt: "2027-01-15T08:00:00.000Z" });
  return signer.kid + key.kty;
}

export function isSignerError(e: unknown): boolean {
  return e instanceof WebhookVerificationError && (e.code === "invalid_input" || e.code === "invalid_options");
}

// A handler's test narrows the verifier's rejection with the class `docauto/testing` exports (one class for both entries).
export async function rejectionCode(verifier: WebhookVerifier, body: string, signature: string): Promise<string> {
  try {
    return (await verifier.verify(body, signature)).eventId;
  } catch (e) {
    if (e instanceof WebhookVerificationError) {
      const code: WebhookErrorCode = e.code;
      return code;
    }
    throw e;
  }
}

// @ts-expect-error: an event needs processingId.
export const missing: TestEvent = { type: "agent_run.completed" };
