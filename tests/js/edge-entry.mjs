// Bundled (IIFE) into Vercel's edge runtime: imports the root entry and `docauto/webhooks` through their "edge-light"
// condition.
import * as docauto from "docauto";
import * as webhooks from "docauto/webhooks";
import { runSuite } from "./suite.mjs";
import { runClientEntry } from "./client-entry.mjs";
import fixtures from "../../target/docauto-js/fixtures.json";

globalThis.__docautoSuite = async () => {
  const lines = [];
  const log = (l) => lines.push(l);
  const a = await runClientEntry(docauto, log);
  const b = await runSuite(webhooks, fixtures, log);
  return JSON.stringify({ lines, passed: a.passed + b.passed, failed: a.failed + b.failed });
};
