// Exactly once across a fleet of Workers in workerd (miniflare): 8 Workers, each its own isolate with its own
// verifier, share one D1 database, then one Durable Object namespace of `DedupeObject` (defined by the first
// Worker, bound by the others). The store's contract runs inside workerd first. The Worker is bundled from the
// package as users deploy it (esbuild, conditions workerd, each .wasm a CompiledWasm module).
import { Miniflare } from "miniflare";
import { fileURLToPath } from "node:url";
import { TestSigner } from "docauto/testing";
import { writeWorker } from "../bundle.mjs";
import { report } from "../common.mjs";
import { startLedger, runScenarios } from "./scenarios.mjs";

const TTL = 4;
const SIZE = 8;
const root = fileURLToPath(new URL("../../../", import.meta.url));
const dir = root + "target/docauto-js/dedupe-workers/";
const only = process.argv.slice(2);

await writeWorker("./dedupe/worker-entry.mjs", dir);

const signer = await TestSigner.generate();
const ledger = await startLedger();
let failed = false;

for (const store of ["d1", "durable-object"]) {
  if (only.length && !only.includes(store)) continue;
  const workers = Array.from({ length: SIZE }, (_, i) => ({
    name: `w${i}`,
    modules: true,
    scriptPath: dir + "worker.mjs",
    modulesRoot: dir,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-09-01",
    bindings: { STORE: store === "d1" ? "d1" : "do", INDEX: String(i), TTL: String(TTL), LEDGER: ledger.url, JWKS: JSON.stringify(signer.jwks) },
    d1Databases: { DB: "dedupe-fleet" },
    durableObjects: i === 0 ? { DEDUPE: "DedupeObject" } : { DEDUPE: { className: "DedupeObject", scriptName: "w0" } },
  }));
  const mf = new Miniflare({ workers, d1Persist: false, durableObjectsPersist: false });
  try {
    const worker = (i) => mf.getWorker(`w${i}`);
    await (await worker(0)).fetch("http://fleet/setup").then((r) => r.text());
    const contract = await (await worker(3)).fetch("http://fleet/contract").then((r) => r.json());
    for (const l of contract.lines) console.log(`${l} [${store}]`);
    report(`dedupe store contract: ${store} (in workerd)`, contract);
    const fleet = {
      size: SIZE,
      ttl: TTL,
      async deliver(i, body, signature, signal) {
        try {
          const res = await (await worker(i)).fetch("http://fleet/hooks", {
            method: "POST", headers: { "x-svc-signature": signature }, body, signal,
          });
          await res.arrayBuffer();
          return res.status;
        } catch {
          return "error";
        }
      },
    };
    console.log(`-- ${store}: ${SIZE} Workers, claimTtlSeconds ${TTL}`);
    const results = await runScenarios({
      fleet, signer, ledger,
      only: [
        "concurrent copies: 8 copies of each of 8 events at once, then the service's redeliveries",
        "failing winners: the first handler of each event throws (500, claim released); a redelivery handles it",
        "a claim against a release: copies arrive while the winner fails and releases",
        "a mark against a late duplicate: copies arrive around the moment the winner marks",
        "a handler slower than twice the claim's ttl keeps its claim (renewed); copies meanwhile get 409",
      ],
    });
    console.log("     (not run in workerd: a crash, a frozen instance and a store refusing writes. A test cannot end or stop " +
      "an isolate (a request dropped by the client keeps running its handler and renewals in miniflare), and D1 and " +
      "Durable Objects cannot be made to refuse writes. The Node fleets run those; the store contract above covers a " +
      "lapsed lease and a stale release at the store itself)");
    report(`dedupe fleet (${SIZE} Workers in workerd): ${store}`, {
      passed: results.filter((r) => r.ok).length,
      failed: results.filter((r) => !r.ok).length,
    });
    failed ||= results.some((r) => !r.ok) || contract.failed > 0;
  } finally {
    await mf.dispose();
  }
}
await ledger.stop();
process.exit(failed ? 1 : 0);
