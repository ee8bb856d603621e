// Extracts the README's example blocks (each preceded by `<!-- example: NAME -->`) and runs each in its runtime
// against a freshly signed request (current time) and a tampered one: 200 then 400 with {"error":"body_mismatch"}.
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Miniflare } from "miniflare";
import { writeWorker } from "./bundle.mjs";
import { Checks, assert } from "./suite.mjs";
import { freePort, onlyRuntimes, report } from "./common.mjs";
import { startRedis } from "./dedupe/engines.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const outDir = root + "target/docauto-js/examples/";
const bin = (b) => root + "node_modules/.bin/" + b;

/** name -> code of every `<!-- example: name -->` block. */
export function extractExamples(markdown) {
  const re = /<!--\s*example:\s*([\w-]+)\s*-->\s*\n```[a-z]*\n([\s\S]*?)\n```/g;
  const out = {};
  for (const m of markdown.matchAll(re)) out[m[1]] = m[2] + "\n";
  return out;
}

async function signedRequests() {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "readme-1", use: "sig", alg: "ES256" };
  const envelope = {
    eventId: "evt_readme_1",
    type: "agent_run.approval_requested",
    processingId: "agr_readme",
    occurredAt: new Date().toISOString(),
    data: {
      object: "agent_run", id: "agr_readme", status: "waiting",
      approval: { id: "apr_1", kind: "before", action: "send_email", requestedAt: new Date().toISOString() },
    },
  };
  const body = JSON.stringify(envelope);
  const iat = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({
    iss: "svc-process", processingId: envelope.processingId, eventId: envelope.eventId, type: envelope.type,
    bodySha256: createHash("sha256").update(body).digest("base64url"), iat, exp: iat + 300,
  }).setProtectedHeader({ alg: "ES256", kid: jwk.kid }).sign(privateKey);
  return { jwks: { keys: [jwk] }, body, token, tampered: body.replace("send_email", "send_money") };
}

async function jwksServer(jwks) {
  const server = createHttpServer((req, res) => {
    res.writeHead(req.url === "/v1/webhooks/jwks.json" ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(jwks));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

/** Sends the valid then the tampered request through `send(body, token)` and asserts 200 / 400 body_mismatch. */
async function exercise(t, name, send, req) {
  await t.run(`README ${name}: a valid signed request gets 200`, async () => {
    const res = await send(req.body, req.token);
    const text = await res.text();
    assert(res.status === 200, `status ${res.status}: ${text.slice(0, 200)}`);
    assert(JSON.parse(text).received === "evt_readme_1", `answer ${text}`);
  });
  await t.run(`README ${name}: a tampered body gets 400 body_mismatch`, async () => {
    const res = await send(req.tampered, req.token);
    const text = await res.text();
    assert(res.status === 400, `status ${res.status}: ${text.slice(0, 200)}`);
    assert(JSON.parse(text).error === "body_mismatch", `answer ${text}`);
  });
}

/** After `exercise`: the same valid delivery again is a processed duplicate (`handle` with a shared store). */
async function exerciseDuplicate(t, name, send, req) {
  await t.run(`README ${name}: the same event delivered again gets 200 duplicate (handled once)`, async () => {
    const res = await send(req.body, req.token);
    const text = await res.text();
    assert(res.status === 200, `status ${res.status}: ${text.slice(0, 200)}`);
    const answer = JSON.parse(text);
    assert(answer.received === "evt_readme_1" && answer.duplicate === true, `answer ${text}`);
  });
}

const post = (url) => (body, token) =>
  fetch(url, { method: "POST", headers: { "x-svc-signature": token, "content-type": "application/json" }, body });

/** Starts a server process, waits for its port, runs `fn`, kills it (and fails after `ms`). */
async function withServer(cmd, args, env, port, fn, ms = 60_000) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const killer = setTimeout(() => child.kill("SIGKILL"), ms);
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${log.slice(0, 800)}`);
      try {
        await fetch(`http://127.0.0.1:${port}/`, { method: "GET" });
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`server never listened: ${log.slice(0, 800)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await fn(`http://127.0.0.1:${port}/`);
  } finally {
    clearTimeout(killer);
    child.kill("SIGKILL");
  }
}

async function main() {
  // `--only node`: the examples that run in Node (node:http, the route handler in this process, node --test), as
  // `cargo xtask test` runs them on each pinned Node line.
  const only = onlyRuntimes(["node", "deno", "bun", "workerd"]);
  const examples = extractExamples(readFileSync(root + "README.md", "utf8"));
  const t = new Checks(console.log);
  const wanted = ["cloudflare-worker", "node-http", "route-handler", "deno-serve", "bun-serve", "handle-worker", "handle-node"];
  await t.run("README has the seven runnable examples", () => {
    const missing = wanted.filter((n) => !examples[n]);
    assert(missing.length === 0, `missing ${missing}`);
  });
  mkdirSync(outDir, { recursive: true });
  for (const n of wanted) if (examples[n]) writeFileSync(`${outDir}${n}.mjs`, examples[n]);
  const req = await signedRequests();
  const keys = await jwksServer(req.jwks);
  const env = { DOCAUTO_BASE_URL: keys.url };
  try {
    if (only.includes("node") && examples["node-http"]) {
      await withServer(process.execPath, [`${outDir}node-http.mjs`], env, await freePort(), (url) =>
        exercise(t, "node http", post(url), req)).catch((e) => t.run("README node http runs", () => { throw e; }));
    }
    if (only.includes("deno") && examples["deno-serve"]) {
      await withServer(bin("deno"), ["run", "--allow-net", "--allow-env", "--allow-read", `${outDir}deno-serve.mjs`],
        { ...env, DENO_NO_UPDATE_CHECK: "1" }, await freePort(), (url) => exercise(t, "Deno.serve", post(url), req))
        .catch((e) => t.run("README Deno.serve runs", () => { throw e; }));
    }
    if (only.includes("bun") && examples["bun-serve"]) {
      await withServer(bin("bun"), [`${outDir}bun-serve.mjs`], env, await freePort(), (url) =>
        exercise(t, "Bun.serve", post(url), req)).catch((e) => t.run("README Bun.serve runs", () => { throw e; }));
    }
    if (only.includes("node") && examples["route-handler"]) {
      process.env.DOCAUTO_BASE_URL = keys.url;
      const mod = await import(pathToFileURL(`${outDir}route-handler.mjs`).href);
      await exercise(t, "route handler (Node)", (body, token) =>
        mod.POST(new Request("https://app.example/api/webhooks", {
          method: "POST", headers: { "x-svc-signature": token }, body,
        })), req);
    }
    for (const [name, extra] of [["cloudflare-worker", {}], ["handle-worker", { durableObjects: { DEDUPE: "DedupeObject" } }]]) {
      if (!only.includes("workerd") || !examples[name]) continue;
      const dir = `${outDir}${name}/`;
      await writeWorker(`${outDir}${name}.mjs`, dir);
      const mf = new Miniflare({
        modules: true, scriptPath: dir + "worker.mjs", compatibilityDate: "2025-09-01",
        modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
        bindings: env, ...extra,
      });
      try {
        const send = (body, token) => mf.dispatchFetch("http://worker.example/", {
          method: "POST", headers: { "x-svc-signature": token }, body,
        });
        await exercise(t, name === "handle-worker" ? "handle in a Cloudflare Worker" : "Cloudflare Worker", send, req);
        if (name === "handle-worker") await exerciseDuplicate(t, "handle in a Cloudflare Worker", send, req);
      } finally {
        await mf.dispose();
      }
    }
    if (only.includes("node") && examples["handle-node"]) {
      const redis = await startRedis();
      try {
        await withServer(process.execPath, [`${outDir}handle-node.mjs`], { ...env, REDIS_URL: redis.url }, await freePort(), async (url) => {
          await exercise(t, "handle in a Node server (Redis)", post(url), req);
          await exerciseDuplicate(t, "handle in a Node server (Redis)", post(url), req);
        }).catch((e) => t.run("README handle in a Node server (Redis) runs", () => { throw e; }));
      } finally {
        await redis.stop();
      }
    }
  } finally {
    await keys.close();
  }
  if (only.includes("node")) await t.run("README testing-handler: the docauto/testing example passes under node --test", async () => {
    assert(examples["testing-handler"], "README has no testing-handler example");
    const file = `${outDir}testing-handler.test.mjs`;
    writeFileSync(file, examples["testing-handler"]);
    const child = spawn(process.execPath, ["--test", "--test-reporter=tap", file], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const code = await new Promise((r) => child.on("close", r));
    const count = (key) => Number((out.match(new RegExp(`^# ${key} (\\d+)`, "m")) ?? [])[1] ?? -1);
    assert(code === 0 && count("pass") === 2 && count("fail") === 0, `exit ${code}: ${out.slice(-800)}`);
  });
  for (const [name, what] of [
    ["emulator-test", "the docauto/emulator example"],
    ["emulator-deliver", "webhook deliveries to the app's route through deliver"],
    ["emulator-websocket", "a RealtimeTranscriber session over emulator.WebSocket"],
  ]) if (only.includes("node")) await t.run(`README ${name}: ${what} passes under node --test and the process ends`, async () => {
    assert(examples[name], `README has no ${name} example`);
    const file = `${outDir}${name}.test.mjs`;
    writeFileSync(file, examples[name]);
    const child = spawn(process.execPath, ["--test", "--test-reporter=tap", file], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const code = await new Promise((r) => child.on("close", r));
    clearTimeout(timer);
    const count = (key) => Number((out.match(new RegExp(`^# ${key} (\\d+)`, "m")) ?? [])[1] ?? -1);
    assert(code === 0 && count("pass") === 1 && count("fail") === 0, `exit ${code}: ${out.slice(-800)}`);
  });
  report("readme examples", t);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(() => process.exit(0), (e) => {
    console.error(e);
    process.exit(1);
  });
}
