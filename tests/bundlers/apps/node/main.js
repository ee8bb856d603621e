// The Node program esbuild bundles (platform node): all four entries, imported as a user imports them. Prints one
// JSON line with the checks' result. The scripted API server's address comes in argv.
import { DocAuto, APIError, NotFoundError, validateExtractionSchema } from "docauto";
import { WebhookVerifier } from "docauto/webhooks";
import { RealtimeTranscriber } from "docauto/realtime";
import { TestSigner } from "docauto/testing";
import { runChecks } from "../shared/checks.js";

const result = await runChecks(
  { DocAuto, APIError, NotFoundError, validateExtractionSchema, WebhookVerifier, RealtimeTranscriber, TestSigner },
  process.argv[2],
);
console.log(JSON.stringify(result));
