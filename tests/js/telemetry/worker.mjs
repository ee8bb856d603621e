// The telemetry checks inside workerd: the request's `base` query parameter is the scripted server's URL (with this
// runtime's prefix). No ContextManager is registered (a Worker has none by default): parents come from the package's
// own contexts.
import * as docauto from "docauto";
import * as webhooks from "docauto/webhooks";
import * as realtime from "docauto/realtime";
import * as testing from "docauto/testing";
import { runChecks } from "./checks.mjs";

export default {
  async fetch(request) {
    const base = new URL(request.url).searchParams.get("base");
    const lines = [];
    const result = await runChecks({ docauto, webhooks, realtime, testing, base, contextManager: undefined, log: (l) => lines.push(l) });
    return Response.json({ lines, ...result });
  },
};
