// Node, ES module import: the "node" > "import" condition (node.js) of the root entry (the API client) and of
// `docauto/webhooks` (the verifier, its own module).
import * as docauto from "docauto";
import * as webhooks from "docauto/webhooks";
import { loadFixtures, report, resolvedCheck } from "./common.mjs";
import { runClientEntry } from "./client-entry.mjs";
import { runSuite } from "./suite.mjs";
import { runRemoteSuite } from "./remote.mjs";

const fx = loadFixtures();
report("node-import resolution", resolvedCheck(import.meta.resolve("docauto"), "node.js"));
report("node-import resolution (webhooks)", resolvedCheck(import.meta.resolve("docauto/webhooks"), "webhooks/node.js"));
report("node-import client entry", await runClientEntry(docauto));
report("node-import docauto/webhooks", await runSuite(webhooks, fx));
report("node-import docauto/webhooks remote jwks", await runRemoteSuite(webhooks, fx));
