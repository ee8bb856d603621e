// The demo backend's one handler (www/backend.mjs) unchanged in Deno, Bun and workerd (miniflare), against the
// emulator: agents listed, the page and the wasm served, a sample uploaded and extracted, a forged webhook refused.
//
// Run: `node tests/js/demo/runtimes.mjs` (needs pkg/ and target/debug/docauto-emulator). Prints `N passed, N failed`.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { startEmulator, EMULATOR_KEY } from "../../../www/dev.mjs";
import { diskAssets } from "../../../www/node-serve.mjs";
import { ROOT } from "../client/harness.mjs";
import { Checks, assert } from "../suite.mjs";
import { report } from "../common.mjs";
import { writeWorker } from "../bundle.mjs";

const t = new Checks(console.log);
const children = new Set();
setTimeout(() => {
  console.log("FAIL the whole file took more than 90 s");
  for (const c of children) c.kill("SIGKILL");
  report("demo backend runtimes", { passed: t.passed, failed: t.failed + 1 });
  console.log(`${t.passed} passed, ${t.failed + 1} failed`);
  process.exit(1);
}, 90_000).unref();
const bin = (name) => join(ROOT, "node_modules", ".bin", name);

function freePort() {
  return new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function waitUp(url, child) {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/api/config`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("did not answer within 10 s");
}

/** The checks every runtime passes; `call(path, init)` resolves to a Response of the handler. */
async function checks(runtime, call) {
  await t.run(`${runtime}: the handler lists the agents with the server-side key`, async () => {
    const list = await (await call("/api/agents")).json();
    assert(list.data?.length === 4, JSON.stringify(list).slice(0, 200));
  });
  await t.run(`${runtime}: the page and the package's wasm are served`, async () => {
    const page = await call("/");
    assert(page.status === 200 && (await page.text()).includes("docauto demo"), `page ${page.status}`);
    const wasm = await call("/pkg/wasm/docauto-client.wasm");
    assert(wasm.headers.get("content-type") === "application/wasm", `wasm ${wasm.headers.get("content-type")}`);
    await wasm.arrayBuffer();
  });
  await t.run(`${runtime}: a sample is uploaded, extracted (202) and waited for`, async () => {
    const created = await call("/api/extract", { method: "POST", body: JSON.stringify({ document: { sample: "note" },
      schema: { type: "object", properties: { topic: { type: ["string", "null"], description: "Topic" } } } }) });
    const body = await created.json();
    assert(created.status === 202, `${created.status} ${JSON.stringify(body)}`);
    const done = await (await call(`/api/runs/${body.run.id}/wait`)).json();
    assert(done.run?.output?.value?.topic === "invoice automation pilot", JSON.stringify(done).slice(0, 300));
  });
  await t.run(`${runtime}: a forged webhook is refused with malformed_signature`, async () => {
    const r = await call("/webhooks", { method: "POST", headers: { "x-svc-signature": "forged" }, body: "{}" });
    const body = await r.json();
    assert(r.status === 400 && body.error === "malformed_signature", `${r.status} ${JSON.stringify(body)}`);
  });
}

async function inProcess(runtime, command, args, env) {
  const port = await freePort();
  const child = spawn(command, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  children.add(child);
  let err = "";
  child.stderr.on("data", (c) => {
    err = (err + c).slice(-2000);
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUp(url, child);
    await checks(runtime, (path, init) => fetch(url + path, init));
  } catch (e) {
    await t.run(`${runtime}: starts`, () => {
      throw new Error(`${e.message} ${err.trim()}`);
    });
  } finally {
    child.kill("SIGTERM");
  }
}

async function workerd(env) {
  const dir = join(ROOT, "target", "docauto-js", "demo-workerd");
  await writeWorker(join(ROOT, "www", "backend.mjs"), dir + "/");
  const assets = diskAssets({ "/pkg/": join(ROOT, "pkg"), "/": join(ROOT, "www", "public") });
  const mf = new Miniflare({
    modules: true, scriptPath: join(dir, "worker.mjs"), compatibilityDate: "2025-09-01",
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    bindings: env,
    serviceBindings: { ASSETS: (request) => assets.fetch(request) },
  });
  try {
    await checks("workerd", (path, init) => mf.dispatchFetch(`http://localhost${path}`, init));
  } finally {
    await mf.dispose();
  }
}

const emulator = await startEmulator(join(ROOT, "target", "debug", "docauto-emulator"), { timeScale: 0.2 });
children.add(emulator.child);
const env = { DOCAUTO_BASE_URL: emulator.baseUrl, DOCAUTO_API_KEY: EMULATOR_KEY };
try {
  await inProcess("deno", bin("deno"), ["run", "--allow-net", "--allow-env", "--allow-read", join(ROOT, "tests/js/demo/serve-deno.mjs")], env);
  await inProcess("bun", bin("bun"), [join(ROOT, "tests/js/demo/serve-bun.mjs")], env);
  await workerd(env);
} catch (e) {
  await t.run("setup", () => {
    throw e;
  });
} finally {
  await emulator.stop();
}
report("demo backend runtimes", t);
console.log(`${t.passed} passed, ${t.failed} failed`);
process.exit(t.failed === 0 ? 0 : 1);
