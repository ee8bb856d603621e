// Compiled (not run) by the bundler suite under node16 (CommonJS and ES module projects) and bundler resolution, with
// TypeScript 5.9 and 7, against the installed tarball: every entry resolves with its types, and an import of a class
// from the entry it left is a compile error (not an `any`).
import { DocAuto, APIError, NotFoundError, validateExtractionSchema, type RunStatus } from "docauto";
import { WebhookVerifier, WebhookVerificationError, type VerifiedWebhookEvent } from "docauto/webhooks";
import { RealtimeTranscriber, RealtimeError } from "docauto/realtime";
import { TestSigner } from "docauto/testing";
// @ts-expect-error WebhookVerifier comes only from docauto/webhooks (0.2.0).
import { WebhookVerifier as Moved } from "docauto";
// @ts-expect-error RealtimeTranscriber comes only from docauto/realtime (0.2.0).
import { RealtimeTranscriber as MovedTranscriber } from "docauto";
// @ts-expect-error TestSigner comes only from docauto/testing.
import { TestSigner as MovedSigner } from "docauto";

export const moved = [Moved, MovedTranscriber, MovedSigner];

export async function read(client: DocAuto, id: string): Promise<RunStatus | undefined> {
  try {
    return (await client.runs.retrieve(id)).status;
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

export function make(): [DocAuto, WebhookVerifier] {
  const client = new DocAuto({ apiKey: "sk_test", baseUrl: "https://api.example" });
  validateExtractionSchema({ type: "object", properties: { total: { type: "number" } } });
  return [client, new WebhookVerifier({ baseUrl: client.baseUrl })];
}

export async function verify(v: WebhookVerifier, body: string, header: string): Promise<VerifiedWebhookEvent> {
  return v.verify(body, header);
}

export function isSdkError(e: unknown): boolean {
  return e instanceof APIError || e instanceof WebhookVerificationError || e instanceof RealtimeError;
}

export function transcriber(url: string): RealtimeTranscriber {
  return new RealtimeTranscriber({ url });
}

export async function signed(): Promise<string> {
  const signer = await TestSigner.generate();
  const { signature } = await signer.sign({ type: "agent_run.waiting", processingId: "agr_1", data: {} });
  return signature;
}
