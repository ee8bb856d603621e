// The Node program esbuild bundles (platform node): all five entries, imported as a user imports them. Prints one
// JSON line with the checks' result. The scripted API server's address comes in argv.
import { DocAuto, APIError, NotFoundError, validateExtractionSchema } from "docauto";
import { WebhookVerifier, WebhookVerificationError } from "docauto/webhooks";
import { RealtimeTranscriber } from "docauto/realtime";
import { TestSigner, WebhookVerificationError as TestingWebhookVerificationError } from "docauto/testing";
import { createEmulator } from "docauto/emulator";
import { runChecks } from "../shared/checks.js";

const result = await runChecks(
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
  process.argv[2],
);
console.log(JSON.stringify(result));
