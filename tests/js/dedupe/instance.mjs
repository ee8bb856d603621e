// One instance of a fleet: a Node `http` server whose every request goes through `verifier.handle({ body, signature },
// handler)` with its own WebhookVerifier and its own client of the store (the bindings of bindings.mjs, as the
// README gives them). Started by fleet-node.mjs: `node instance.mjs <index>` with DEDUPE_CONFIG (JSON: binding,
// engines, jwks, ttl, ledger); prints `LISTEN <port>` once it serves.
import { createServer } from "node:http";
import { WebhookVerifier } from "docauto/webhooks";
import { makeBinding } from "./bindings.mjs";
import { makeHandler } from "./handler.mjs";

const index = Number(process.argv[2]);
const config = JSON.parse(process.env.DEDUPE_CONFIG);
const binding = await makeBinding(config.binding, config.engines);
const verifier = new WebhookVerifier({ jwks: config.jwks, dedupe: binding.store, claimTtlSeconds: config.ttl });
const handler = makeHandler({ index, ledger: config.ledger, crash: () => process.kill(process.pid, "SIGKILL") });
const onError = (error, { event, stage }) =>
  console.error(`instance ${index}: ${stage} of ${event.eventId}: ${error?.message ?? error}`);

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const response = await verifier.handle(
    { body: Buffer.concat(chunks), signature: req.headers["x-svc-signature"] },
    handler,
    { onError: config.quiet ? () => {} : onError },
  );
  res.writeHead(response.status, { "content-type": "application/json" });
  res.end(await response.text());
});
server.keepAliveTimeout = 1;
server.listen(0, "127.0.0.1", () => console.log(`LISTEN ${server.address().port}`));
process.on("SIGTERM", async () => {
  server.close();
  await binding.close();
  process.exit(0);
});
