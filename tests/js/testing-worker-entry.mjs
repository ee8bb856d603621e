// The Worker module of tests/js/run-testing-workerd.mjs: `docauto/testing` and `docauto/webhooks` through their
// "workerd" conditions, jose through its own, and the shared TestSigner suite.
import * as testing from "docauto/testing";
import * as webhooks from "docauto/webhooks";
import * as jose from "jose";
import { runTestingSuite } from "./testing.mjs";

export default {
  async fetch() {
    const lines = [];
    const r = await runTestingSuite({ testing, webhooks, jose }, (l) => lines.push(l));
    return Response.json({ lines, passed: r.passed, failed: r.failed });
  },
};
