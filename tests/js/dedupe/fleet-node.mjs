// Exactly once across a fleet of Node processes, against real engines: redis-server (through node-redis, ioredis and
// @upstash/redis over a REST stand-in) and PostgreSQL (node-postgres). For each binding: the store's contract
// (contract.mjs), then 8 instance processes receive the scenarios of scenarios.mjs. A control run with the README's
// old unfenced recipe must show the double handling the README warns of, so the harness is seen to catch it.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { TestSigner } from "docauto/testing";
import { report } from "../common.mjs";
import { startRedis, startPostgres, startUpstashStandIn } from "./engines.mjs";
import { UPSTASH_TOKEN, makeBinding } from "./bindings.mjs";
import { runStoreContract } from "./contract.mjs";
import { startLedger, runScenarios, isDuplicate } from "./scenarios.mjs";

/** The contract of a binding's store, against its engine. */
async function runContract(binding, engines) {
  const b = await makeBinding(binding, engines);
  try {
    if (binding === "pg") {
      await b.store.setup();
      await b.store.setup(); // twice: idempotent
    }
    return await runStoreContract(b.store, (line) => console.log(`${line} [${binding}]`), binding.replace(/\W/g, ""));
  } finally {
    await b.close();
  }
}

const TTL = 5; // seconds: the slow cases take seconds, and on a loaded 2-core machine a store call still answers within a third of it
const SIZE = 8;
const instanceFile = fileURLToPath(new URL("./instance.mjs", import.meta.url));
const only = process.argv.slice(2);

/** Starts `size` instance processes of `binding`; crash, freeze and thaw act on one process by its PID. */
async function startFleet({ binding, engines, jwks, ledger, refuseWrites }) {
  const config = JSON.stringify({ binding, engines, jwks, ttl: TTL, ledger: ledger.url, quiet: binding.startsWith("unfenced") });
  const instances = [];
  const spawnOne = (i) => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [instanceFile, String(i)], {
      env: { ...process.env, DEDUPE_CONFIG: config },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const entry = { child, port: 0, stopping: false };
    instances[i] = entry;
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      const port = line.match(/^LISTEN (\d+)$/)?.[1];
      if (port) {
        entry.port = Number(port);
        resolve();
      }
    });
    child.once("exit", (code, signal) => {
      if (!entry.port) reject(new Error(`instance ${i} exited (${code ?? signal}) before it listened`));
      // A crashed instance is replaced, as an orchestrator restarts a process.
      else if (!entry.stopping && signal === "SIGKILL") spawnOne(i).catch(() => {});
    });
  });
  await Promise.all(Array.from({ length: SIZE }, (_, i) => spawnOne(i)));
  return {
    size: SIZE,
    ttl: TTL,
    async deliver(i, body, signature) {
      let entry = instances[i];
      for (let t = 0; t < 100 && !entry.port; t++) await new Promise((r) => setTimeout(r, 20));
      try {
        const res = await fetch(`http://127.0.0.1:${entry.port}/`, {
          method: "POST",
          headers: { "x-svc-signature": signature, connection: "close" },
          body,
          signal: AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        if (process.env.DEDUPE_DEBUG) console.log(`deliver ${i}: ${res.status} ${text}`);
        return { status: res.status, duplicate: isDuplicate(text) };
      } catch {
        return { status: "error", duplicate: false };
      }
    },
    // The handler kills its own process: the delivery's connection drops.
    async deliverCrashing(i, body, signature) {
      return { status: (await this.deliver(i, body, signature)).status, crashedAt: Date.now() };
    },
    freeze: (i) => instances[i].child.kill("SIGSTOP"),
    thaw: (i) => instances[i].child.kill("SIGCONT"),
    refuseWrites,
    async stop() {
      await Promise.all(instances.map((entry) => new Promise((resolve) => {
        entry.stopping = true;
        if (entry.child.exitCode !== null || entry.child.signalCode !== null) return resolve();
        entry.child.kill("SIGCONT");
        const timer = setTimeout(() => entry.child.kill("SIGKILL"), 5000);
        entry.child.once("exit", () => (clearTimeout(timer), resolve()));
        entry.child.kill("SIGTERM");
      })));
    },
  };
}

const redis = await startRedis();
const postgres = await startPostgres();
const admin = await makeBinding("ioredis", { redis: redis.url });
const upstash = await startUpstashStandIn((args) => admin.raw(args), UPSTASH_TOKEN);
const pgAdmin = await makeBinding("pg", { postgres: postgres.connectionString });
const ledger = await startLedger();
const engines = { redis: redis.url, postgres: postgres.connectionString, upstash: upstash.url };
const signer = await TestSigner.generate();
const jwks = signer.jwks;

const refuse = {
  // Redis refuses every write while it lacks a replica it was told to need (NOREPLICAS).
  redis: async (on) => admin.raw(["CONFIG", "SET", "min-replicas-to-write", on ? "1" : "0"]),
  // PostgreSQL: every new transaction read-only (existing sessions take the setting at their next command).
  pg: async (on) => {
    await pgAdmin.raw(`ALTER SYSTEM SET default_transaction_read_only = ${on ? "on" : "off"}`);
    await pgAdmin.raw("SELECT pg_reload_conf()");
    await new Promise((r) => setTimeout(r, 100));
  },
};

let failed = false;
try {
  for (const binding of ["node-redis", "ioredis", "upstash", "pg"]) {
    if (only.length && !only.includes(binding)) continue;
    const contract = await runContract(binding, engines);
    report(`dedupe store contract: ${binding}`, contract);
    const fleet = await startFleet({
      binding, engines, jwks, ledger, refuseWrites: binding === "pg" ? refuse.pg : refuse.redis,
    });
    try {
      console.log(`-- ${binding}: ${SIZE} processes, claimTtlSeconds ${TTL}`);
      const scenarios = process.env.DEDUPE_SCENARIOS?.split("|");
      const results = await runScenarios({ fleet, signer, ledger, only: scenarios });
      report(`dedupe fleet (${SIZE} Node processes): ${binding}`, {
        passed: results.filter((r) => r.ok).length,
        failed: results.filter((r) => !r.ok).length,
      });
      failed ||= results.some((r) => !r.ok);
    } finally {
      await fleet.stop();
    }
  }
  if (!only.length || only.includes("unfenced")) {
    // The control: the old recipe (no lease) handles a slow handler's event twice, and the harness says so.
    const fleet = await startFleet({ binding: "unfenced-node-redis", engines, jwks, ledger });
    try {
      console.log("-- control: the README's old unfenced recipe");
      const [slow] = await runScenarios({
        fleet, signer, ledger, log: () => {},
        only: ["a handler slower than twice the claim's ttl keeps its claim (renewed); copies meanwhile get 409"],
      });
      const seen = !slow.ok && /handled [2-9] times|answered/.test(slow.detail);
      console.log(`${seen ? "ok  " : "FAIL"} control: an unfenced store handles a slow handler's event again (${slow.detail ?? "no double handling seen"})`);
      report("dedupe fleet control: the old unfenced recipe is caught handling twice", { passed: seen ? 1 : 0, failed: seen ? 0 : 1 });
    } finally {
      await fleet.stop();
    }
  }
} finally {
  await ledger.stop();
  await upstash.stop();
  await admin.close();
  await pgAdmin.close();
  await redis.stop();
  await postgres.stop();
}
process.exit(failed ? 1 : 0);
