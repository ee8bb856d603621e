// The demo backend as a module for any Fetch-API runtime (Deno, Bun, workerd): `export default { fetch }`.
// Settings come from the environment (workerd: the `env` bindings): DOCAUTO_BASE_URL, DOCAUTO_API_KEY, and optional
// DOCAUTO_WEBHOOK_ENDPOINT (a saved endpoint pointing at this backend's /webhooks) and DEMO_PUBLIC_URL. The page and
// /pkg/ files come from an ASSETS binding (`{ fetch(request) }`); see www/README.md for each runtime.
import { DocAuto } from "docauto";
import { WebhookVerifier } from "docauto/webhooks";
import { createApp } from "./app.mjs";

const sdk = { DocAuto, WebhookVerifier };

let app;

function setting(env, name) {
  if (env && typeof env[name] === "string") return env[name];
  if (typeof process !== "undefined" && process.env) return process.env[name];
  if (typeof Deno !== "undefined") return Deno.env.get(name);
  return undefined;
}

export default {
  fetch(request, env) {
    app ??= createApp({
      sdk,
      apiKey: setting(env, "DOCAUTO_API_KEY"),
      baseUrl: setting(env, "DOCAUTO_BASE_URL"),
      webhookEndpointId: setting(env, "DOCAUTO_WEBHOOK_ENDPOINT"),
      publicUrl: setting(env, "DEMO_PUBLIC_URL"),
      assets: env?.ASSETS ?? globalThis.DEMO_ASSETS,
    });
    return app.fetch(request);
  },
};
