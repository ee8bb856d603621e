// The Worker module run inside workerd: imports the root entry and `docauto/webhooks` through their "workerd"
// condition (each imports its own .wasm as a compiled module).
import * as docauto from "docauto";
import * as webhooks from "docauto/webhooks";
import { runSuite } from "./suite.mjs";
import { runClientEntry } from "./client-entry.mjs";
import fixtures from "../../target/docauto-js/fixtures.json";

export default {
  async fetch() {
    const lines = [];
    const log = (l) => lines.push(l);
    const a = await runClientEntry(docauto, log);
    const b = await runSuite(webhooks, fixtures, log);
    return Response.json({ lines, passed: a.passed + b.passed, failed: a.failed + b.failed });
  },
};
