// Node, ES module import: the "node" > "import" condition (node.js).
import * as docauto from "docauto";
import { loadFixtures, report, resolvedCheck } from "./common.mjs";
import { runSuite } from "./suite.mjs";
import { runRemoteSuite } from "./remote.mjs";

const fx = loadFixtures();
report("node-import resolution", resolvedCheck(import.meta.resolve("docauto"), "node.js"));
report("node-import", await runSuite(docauto, fx));
report("node-import remote jwks", await runRemoteSuite(docauto, fx));
