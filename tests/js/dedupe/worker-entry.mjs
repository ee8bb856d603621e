// A fleet instance as a Cloudflare Worker: `verifier.handle(request, handler)` with a D1 or Durable Object store
// (env.STORE), one verifier per isolate. `/contract` runs the store's contract inside workerd instead.
import { WebhookVerifier, d1Store, durableObjectStore, DedupeObject } from "docauto/webhooks";
import { runStoreContract } from "./contract.mjs";
import { makeHandler } from "./handler.mjs";

export { DedupeObject };

let verifier;
const storeOf = (env) => (env.STORE === "d1" ? d1Store(env.DB) : durableObjectStore(env.DEDUPE, { shards: 4 }));

export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    if (path === "/setup") {
      await storeOf(env).setup();
      return new Response("ok");
    }
    if (path === "/contract") {
      const lines = [];
      const r = await runStoreContract(storeOf(env), (l) => lines.push(l), env.STORE);
      return Response.json({ lines, ...r });
    }
    verifier ??= new WebhookVerifier({ jwks: JSON.parse(env.JWKS), dedupe: storeOf(env), claimTtlSeconds: Number(env.TTL) });
    const handler = makeHandler({
      index: Number(env.INDEX),
      ledger: env.LEDGER,
      // A Worker cannot kill its isolate: it hangs, and the test stops workerd (every isolate ends, as in a
      // deploy), then starts it again over the persisted store.
      crash: () => new Promise(() => {}),
    });
    return verifier.handle(request, handler, { onError: () => {} });
  },
};
