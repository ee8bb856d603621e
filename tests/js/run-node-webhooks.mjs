// Node, the slim verifier-only entry: `docauto/webhooks` (its own, smaller wasm module) passes the same suite.
import * as webhooks from "docauto/webhooks";
import { loadFixtures, report, resolvedCheck } from "./common.mjs";
import { runSuite } from "./suite.mjs";
import { runRemoteSuite } from "./remote.mjs";

const fx = loadFixtures();
report("docauto/webhooks resolution", resolvedCheck(import.meta.resolve("docauto/webhooks"), "webhooks/node.js"));
report("docauto/webhooks", await runSuite(webhooks, fx));
report("docauto/webhooks remote jwks", await runRemoteSuite(webhooks, fx));
