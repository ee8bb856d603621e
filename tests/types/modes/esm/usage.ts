// Compiled (not run) by `cargo xtask test` under one module mode (see tsconfig.json beside this file): every entry
// resolves, with its types, from this kind of project.
import { DocAuto, WebhookVerifier, APIError } from "docauto";
import { WebhookVerifier as EdgeVerifier, WebhookVerificationError } from "docauto/webhooks";
import { RealtimeTranscriber, RealtimeError } from "docauto/realtime";
import { TestSigner } from "docauto/testing";
import { createEmulator, type InProcessEmulator } from "docauto/emulator";

export function make(): [DocAuto, WebhookVerifier, EdgeVerifier] {
  const client = new DocAuto({ apiKey: "sk_test", baseUrl: "https://api.example" });
  return [client, new WebhookVerifier({ baseUrl: client.baseUrl }), new EdgeVerifier({ baseUrl: client.baseUrl })];
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

export function emulated(): [InProcessEmulator, DocAuto] {
  const emu = createEmulator({ timeScale: 0.01 });
  return [emu, new DocAuto({ apiKey: emu.apiKey, baseUrl: emu.url, fetch: emu.fetch })];
}
