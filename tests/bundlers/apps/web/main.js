// The page every browser bundler builds (Vite build and dev server, webpack, esbuild): all five entries, imported as
// a user imports them. The scripted API server's address comes in the page's query (`?api=`).
import { DocAuto, APIError, NotFoundError, validateExtractionSchema } from "docauto";
import { WebhookVerifier, WebhookVerificationError } from "docauto/webhooks";
import { RealtimeTranscriber } from "docauto/realtime";
import { TestSigner, WebhookVerificationError as TestingWebhookVerificationError } from "docauto/testing";
import { createEmulator } from "docauto/emulator";
import { runChecks } from "../shared/checks.js";

const api = new URL(location.href).searchParams.get("api");
runChecks(
  {
    DocAuto,
    APIError,
    NotFoundError,
    validateExtractionSchema,
    WebhookVerifier,
    WebhookVerificationError,
    RealtimeTranscriber,
    TestSigner,
    TestingWebhookVerificationError,
    createEmulator,
  },
  api,
).then(
  (result) => (window.__bundlerResult = result),
  (e) => (window.__bundlerResult = { passed: 0, failed: 1, lines: [`FAIL page: ${e}`] }),
);
