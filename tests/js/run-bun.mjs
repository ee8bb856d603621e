// Bun: the "bun" condition (node.js).
import * as docauto from "docauto";
import { loadFixtures, report, resolvedCheck } from "./common.mjs";
import { runSuite } from "./suite.mjs";
import { runRemoteSuite } from "./remote.mjs";

const fx = loadFixtures();
report("bun resolution", resolvedCheck(Bun.resolveSync("docauto", import.meta.dir), "node.js"));
report("bun", await runSuite(docauto, fx));
report("bun remote jwks", await runRemoteSuite(docauto, fx));
