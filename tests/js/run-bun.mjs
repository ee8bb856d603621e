// Bun: the "bun" condition (node.js) of the root entry and of `docauto/webhooks`.
import * as docauto from "docauto";
import * as webhooks from "docauto/webhooks";
import { loadFixtures, report, resolvedCheck } from "./common.mjs";
import { runClientEntry } from "./client-entry.mjs";
import { runSuite } from "./suite.mjs";
import { runRemoteSuite } from "./remote.mjs";

const fx = loadFixtures();
report("bun resolution", resolvedCheck(Bun.resolveSync("docauto", import.meta.dir), "node.js"));
report("bun resolution (webhooks)", resolvedCheck(Bun.resolveSync("docauto/webhooks", import.meta.dir), "webhooks/node.js"));
report("bun client entry", await runClientEntry(docauto));
report("bun docauto/webhooks", await runSuite(webhooks, fx));
report("bun docauto/webhooks remote jwks", await runRemoteSuite(webhooks, fx));
