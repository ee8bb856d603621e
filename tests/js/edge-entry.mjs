// Bundled (IIFE) into Vercel's edge runtime: imports "docauto" through the "edge-light" condition.
import * as docauto from "docauto";
import { runSuite } from "./suite.mjs";
import fixtures from "../../target/docauto-js/fixtures.json";

globalThis.__docautoSuite = async () => {
  const lines = [];
  const r = await runSuite(docauto, fixtures, (l) => lines.push(l));
  return JSON.stringify({ lines, passed: r.passed, failed: r.failed });
};
