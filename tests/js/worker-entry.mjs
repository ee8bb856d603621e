// The Worker module run inside workerd: imports the package through its "workerd" condition.
import * as docauto from "docauto";
import { runSuite } from "./suite.mjs";
import fixtures from "../../target/docauto-js/fixtures.json";

export default {
  async fetch() {
    const lines = [];
    const r = await runSuite(docauto, fixtures, (l) => lines.push(l));
    return Response.json({ lines, passed: r.passed, failed: r.failed });
  },
};
