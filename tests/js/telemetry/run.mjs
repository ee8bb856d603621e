// The telemetry checks in this process's runtime (Node, Deno or Bun), against the scripted server at argv's URL:
// prints the check lines, then one JSON line `{ passed, failed }`. Started by runtimes.mjs.
import * as docauto from "docauto";
import * as webhooks from "docauto/webhooks";
import * as realtime from "docauto/realtime";
import * as testing from "docauto/testing";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { runChecks } from "./checks.mjs";

const argv = globalThis.Deno?.args ?? process.argv.slice(2);
const base = argv[0];
const result = await runChecks({ docauto, webhooks, realtime, testing, base, contextManager: new AsyncLocalStorageContextManager().enable(), log: (l) => console.log(l) });
console.log(JSON.stringify(result));
