// `docauto/testing` in Node (`node tests/js/run-testing.mjs`) and Deno (`deno run ... tests/js/run-testing.mjs`):
// TestSigner's tokens checked with jose and with `docauto/webhooks`' verifier, each entry through the runtime's
// own `exports` condition.
import * as testing from "docauto/testing";
import * as webhooks from "docauto/webhooks";
import * as jose from "jose";
import { report, resolvedCheck } from "./common.mjs";
import { runTestingSuite } from "./testing.mjs";

const runtime = typeof Deno === "undefined" ? "node" : "deno";
const resolved = import.meta.resolve("docauto/testing").replace(/^file:\/\//, "");
report(`${runtime} docauto/testing resolution`, resolvedCheck(resolved, `testing/${runtime === "deno" ? "deno" : "node"}.js`));
report(`${runtime} docauto/testing`, await runTestingSuite({ testing, webhooks, jose }));
