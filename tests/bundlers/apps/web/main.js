// The page every browser bundler builds (Vite build and dev server, webpack, esbuild): all four entries, imported as
// a user imports them. The scripted API server's address comes in the page's query (`?api=`).
import { DocAuto, APIError, NotFoundError, validateExtractionSchema } from "docauto";
import { WebhookVerifier } from "docauto/webhooks";
import { RealtimeTranscriber } from "docauto/realtime";
import { TestSigner } from "docauto/testing";
import { runChecks } from "../shared/checks.js";

const api = new URL(location.href).searchParams.get("api");
runChecks(
  { DocAuto, APIError, NotFoundError, validateExtractionSchema, WebhookVerifier, RealtimeTranscriber, TestSigner },
  api,
).then(
  (result) => (window.__bundlerResult = result),
  (e) => (window.__bundlerResult = { passed: 0, failed: 1, lines: [`FAIL page: ${e}`] }),
);
