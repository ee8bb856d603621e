// Deno: the "deno" condition (deno.js, Deno.readFileSync of the .wasm).
import * as docauto from "docauto";
import { loadFixtures, report, resolvedCheck } from "./common.mjs";
import { runSuite } from "./suite.mjs";
import { runRemoteSuite } from "./remote.mjs";

const fx = loadFixtures();
report("deno resolution", resolvedCheck(import.meta.resolve("docauto").replace(/^file:\/\//, ""), "deno.js"));
report("deno", await runSuite(docauto, fx));
report("deno remote jwks", await runRemoteSuite(docauto, fx));
