// Exactly once across a fleet of Workers in workerd (miniflare): 8 Workers, each its own isolate with its own
// verifier, share one D1 database, then one Durable Object namespace of `DedupeObject` (defined by the first
// Worker, bound by the others). The store's contract runs inside workerd first. The Worker is bundled from the
// package as users deploy it (esbuild, conditions workerd, each .wasm a CompiledWasm module).
import { Miniflare } from "miniflare";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { TestSigner } from "docauto/testing";
import { writeWorker } from "../bundle.mjs";
import { report } from "../common.mjs";
import { startLedger, runScenarios, isDuplicate } from "./scenarios.mjs";

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
  // The store's engine keeps its data on disk (a temp folder), so that workerd can be stopped and started again:
  // the crash below ends every isolate at once, as a deploy or an eviction does, and the fleet comes back over the
  // same D1 database or Durable Objects.
  const persist = `${dir}persist-${store}/`;
  rmSync(persist, { recursive: true, force: true });
  const options = { workers, d1Persist: persist + "d1", durableObjectsPersist: persist + "do" };
  let mf = new Miniflare(options);
  let up = mf.ready;
  try {
    const worker = async (i) => (await up, mf.getWorker(`w${i}`));
    await (await worker(0)).fetch("http://fleet/setup").then((r) => r.text());
    const contract = await (await worker(3)).fetch("http://fleet/contract").then((r) => r.json());
    for (const l of contract.lines) console.log(`${l} [${store}]`);
    report(`dedupe store contract: ${store} (in workerd)`, contract);
    const fleet = {
      size: SIZE,
      ttl: TTL,
      async deliver(i, body, signature) {
        try {
          const res = await (await worker(i)).fetch("http://fleet/hooks", {
            method: "POST", headers: { "x-svc-signature": signature }, body, signal: AbortSignal.timeout(60_000),
          });
          return { status: res.status, duplicate: isDuplicate(await res.text()) };
        } catch {
          return { status: "error", duplicate: false };
        }
      },
      // The handler hangs once it started (its claim taken, not yet renewed: that comes a third of the ttl later);
      // then workerd is stopped, which ends every isolate, and started again over the persisted store. Resolves once
      // workerd is stopped; deliveries wait for the new one.
      async deliverCrashing(i, body, signature, eventId) {
        const delivery = this.deliver(i, body, signature);
        await ledger.until(() => ledger.started(eventId).length > 0, 30_000, `${eventId} to start`);
        const crashedAt = Date.now();
        await mf.dispose();
        const { status } = await delivery;
        mf = new Miniflare(options);
        up = mf.ready;
        return { status, crashedAt };
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
        "a crash after the claim: the claim lapses after the ttl and a redelivery is handled",
      ],
    });
    console.log("     (not run in workerd: a frozen instance and a store refusing writes. A test cannot stop one isolate " +
      "and let it go on later (a request dropped by the client keeps running its handler and renewals in miniflare), and " +
      "D1 and Durable Objects cannot be made to refuse writes. The Node fleets run those; the store contract above " +
      "covers a lapsed lease and a stale release at the store itself)");
    report(`dedupe fleet (${SIZE} Workers in workerd): ${store}`, {
      passed: results.filter((r) => r.ok).length,
      failed: results.filter((r) => !r.ok).length,
    });
    failed ||= results.some((r) => !r.ok) || contract.failed > 0;
  } finally {
    await mf.dispose();
    rmSync(persist, { recursive: true, force: true });
  }
}
await ledger.stop();
process.exit(failed ? 1 : 0);
