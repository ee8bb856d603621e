// Deno: the "deno" condition (deno.js, Deno.readFileSync of the .wasm) of the root entry and of `docauto/webhooks`.
import * as docauto from "docauto";
import * as webhooks from "docauto/webhooks";
import { loadFixtures, report, resolvedCheck } from "./common.mjs";
import { runClientEntry } from "./client-entry.mjs";
import { runSuite } from "./suite.mjs";
import { runRemoteSuite } from "./remote.mjs";

const fx = loadFixtures();
const resolved = (s) => import.meta.resolve(s).replace(/^file:\/\//, "");
report("deno resolution", resolvedCheck(resolved("docauto"), "deno.js"));
report("deno resolution (webhooks)", resolvedCheck(resolved("docauto/webhooks"), "webhooks/deno.js"));
report("deno client entry", await runClientEntry(docauto));
report("deno docauto/webhooks", await runSuite(webhooks, fx));
report("deno docauto/webhooks remote jwks", await runRemoteSuite(webhooks, fx));
