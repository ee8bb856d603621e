// `cargo xtask test --docs`: every JS and TS code block of the documentation, run where it is meant to run, each
// against the local emulator (the package's `docauto-emulator` command) or a delivery signed here with jose; every
// TypeScript block also type-checked under `--strict` in its runtime's types. Prints one line per block,
// `ok README.md:57` or `not ok docs/webhooks.md:120 <why>` (file and the line of its opening fence), then
// `N passed, N failed`, and a `RESULT` line for `cargo xtask test`.
//
//   node tests/docs/run.mjs [--only node] [FILE.md ...]
//
// `--only node`: the blocks that run in Node alone, and no type-check (the Node lines of `cargo xtask test`).
// Needs pkg/ (`cargo xtask build`), and Vite for the Vite block (`npm ci` in tests/bundlers). How a block says
// where it runs: tests/docs/blocks.mjs.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { createHash } from "node:crypto";
import { extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transform } from "esbuild";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { blocksOf } from "./blocks.mjs";
import { CONTEXTS, ENV_OF_KIND, TSCONFIG } from "./contexts.mjs";
import { checkLinks } from "./links.mjs";
import { freePort } from "../js/common.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** This run's folder: runs side by side (two writers' checks) never share files. Removed at the end. */
const OUT = join(ROOT, "target/docs-test", String(process.pid));
const bin = (b) => join(ROOT, "node_modules/.bin", b);

/** The documentation whose blocks run: the README, the guides, the migration guide. */
export function docFiles() {
  const docs = existsSync(join(ROOT, "docs"))
    ? readdirSync(join(ROOT, "docs"), { recursive: true }).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)
    : [];
  return ["README.md", "MIGRATION.md", "CONTRIBUTING.md", ...docs].filter((f) => existsSync(join(ROOT, f)));
}

// ---------------------------------------------------------------------------------------------------------------
// Processes and servers

/** Runs `cmd args` to its end (killed after `ms`); resolves `{ code, out }` (stdout and stderr together). */
function runProcess(cmd, args, { env = {}, cwd = OUT, ms = 60_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => {
      out += `\n[killed after ${ms} ms]`;
      child.kill("SIGKILL");
    }, ms);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: -1, out: `${out}\n${e.message}` });
    });
  });
}

/** Starts a long-running process; `{ child, log(), stop() }`. */
function startProcess(cmd, args, { env = {}, cwd = OUT } = {}) {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  child.on("error", (e) => (log += `\n${e.message}`));
  return {
    child,
    log: () => log,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("close", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}

/** Waits until something answers HTTP on `port` (any status), or the process ends, or 30 s pass. */
async function waitForPort(port, proc) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`exited with code ${proc.child.exitCode}: ${tail(proc.log())}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { method: "HEAD", signal: AbortSignal.timeout(2000) });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`never answered on port ${port}: ${tail(proc.log())}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const tail = (text, n = 1200) => (text.length > n ? `...${text.slice(-n)}` : text).trim();

/**
 * The package's own `docauto-emulator` command on a free port, as the docs tell users to start it; resolves to
 * `{ url, apiKey, stop() }`.
 */
async function startEmulator(extraArgs = []) {
  const proc = startProcess(process.execPath, [join(ROOT, "pkg/emulator/bin.js"), "--addr", "127.0.0.1:0", ...extraArgs]);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(proc.log());
    if (m) return { url: m[1], apiKey: "sk_test_docauto", stop: proc.stop };
    if (proc.child.exitCode !== null || Date.now() > deadline) {
      await proc.stop();
      throw new Error(`the emulator did not start: ${tail(proc.log())}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Signed deliveries (jose, not our signer) and the key set they verify against

async function deliveries() {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "docs-1", use: "sig", alg: "ES256" };
  const sign = async (envelope) => {
    const body = JSON.stringify(envelope);
    const iat = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({
      iss: "svc-process",
      processingId: envelope.processingId,
      eventId: envelope.eventId,
      type: envelope.type,
      bodySha256: createHash("sha256").update(body).digest("base64url"),
      iat,
      exp: iat + 300,
    })
      .setProtectedHeader({ alg: "ES256", kid: jwk.kid })
      .sign(privateKey);
    return { body, token };
  };
  const envelope = (n) => ({
    eventId: `evt_docs_${n}`,
    type: "agent_run.approval_requested",
    processingId: "agr_docs",
    occurredAt: new Date().toISOString(),
    data: {
      object: "agent_run",
      id: "agr_docs",
      status: "waiting",
      approval: { id: "apr_1", kind: "before", action: "send_email", requestedAt: new Date().toISOString() },
    },
  });
  const server = createServer((req, res) => {
    const ok = req.url === "/v1/webhooks/jwks.json";
    res.writeHead(ok ? 200 : 404, { "content-type": "application/json", "cache-control": "max-age=3600" });
    res.end(ok ? JSON.stringify({ keys: [jwk] }) : "{}");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  let n = 0;
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    /** A fresh signed delivery, and the same token over a tampered body. */
    async next() {
      const { body, token } = await sign(envelope(++n));
      return { eventId: `evt_docs_${n}`, body, token, tampered: body.replace("send_email", "send_money") };
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

/**
 * What every webhook example must do with deliveries (`send(body, token)` resolves to a Response-like
 * `{ status, text }`): a valid one is answered 2xx; the same token over a tampered body 400 with
 * `{"error":"body_mismatch"}`; with `handle`, the valid one delivered again 200 `duplicate: true`.
 */
async function exerciseDeliveries(scenario, send, signed) {
  const d = await signed.next();
  const ok = await send(d.body, d.token);
  if (ok.status < 200 || ok.status > 299) throw new Error(`a valid delivery got ${ok.status}: ${ok.text.slice(0, 300)}`);
  const bad = await send(d.tampered, d.token);
  if (bad.status !== 400 || !/"error"\s*:\s*"body_mismatch"/.test(bad.text)) {
    throw new Error(`a tampered body got ${bad.status} ${bad.text.slice(0, 300)}, not 400 {"error":"body_mismatch"}`);
  }
  if (scenario === "handle") {
    const again = await send(d.body, d.token);
    if (again.status !== 200 || !/"duplicate"\s*:\s*true/.test(again.text)) {
      throw new Error(`the same delivery again got ${again.status} ${again.text.slice(0, 300)}, not 200 duplicate`);
    }
  } else if (scenario !== "verify") {
    throw new Error(`unknown deliveries=${scenario} (verify or handle)`);
  }
}

const postTo = (url) => async (body, token) => {
  const res = await fetch(url, { method: "POST", headers: { "x-svc-signature": token, "content-type": "application/json" }, body });
  return { status: res.status, text: await res.text() };
};

// ---------------------------------------------------------------------------------------------------------------
// Files of a block

/** A file name for block `b` (`docs-webhooks-md-120`), unique per block. */
const slug = (b) => `${b.file.replace(/[^\w]+/g, "-")}-${b.line}`;

/** The block's code as JavaScript a runtime without TypeScript runs (esbuild strips the types). */
async function asJs(b, format = "esm") {
  if (b.lang !== "ts") return b.code;
  const res = await transform(b.code, { loader: "ts", format, target: "es2022" });
  return res.code;
}

/** The working folder of the blocks: the sample documents the examples read. */
function workDir() {
  const dir = join(OUT, "work");
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function writeSamples(dir) {
  const { SAMPLES, sampleBytes } = await import(pathToFileURL(join(ROOT, "www/samples.mjs")).href);
  for (const sample of SAMPLES) writeFileSync(join(dir, sample.file), sampleBytes(sample));
}

// ---------------------------------------------------------------------------------------------------------------
// Runners, one per kind

/**
 * The environment variables of a block: `env=emulator` (default: `DOCAUTO_BASE_URL` and `DOCAUTO_API_KEY` of a
 * fresh emulator), `env=jwks` (default with `deliveries`: `DOCAUTO_BASE_URL` serving the key set the deliveries are
 * signed with) or `env=none`; and `services=redis,postgres`: real engines started for the block (`REDIS_URL`,
 * `DATABASE_URL`).
 */
async function blockEnv(b, ctx) {
  const stops = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  try {
    const env = await environment(b, ctx, stops);
    return { env, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

async function environment(b, ctx, stops) {
  const env = {};
  for (const service of (b.directive.attrs.services ?? "").split(",").filter(Boolean)) {
    const engines = await import("../js/dedupe/engines.mjs");
    if (service === "redis") {
      const redis = await engines.startRedis();
      stops.push(redis.stop);
      env.REDIS_URL = redis.url;
    } else if (service === "postgres") {
      const pg = await engines.startPostgres();
      stops.push(pg.stop);
      env.DATABASE_URL = pg.connectionString;
    } else {
      throw new Error(`unknown service ${service} (redis, postgres)`);
    }
  }
  const want = b.directive.attrs.env ?? (b.directive.attrs.deliveries ? "jwks" : "emulator");
  if (want === "none") return env;
  if (want === "jwks") return { ...env, DOCAUTO_BASE_URL: ctx.signed.baseUrl };
  if (want !== "emulator") throw new Error(`unknown env=${want} (emulator, jwks or none)`);
  const emulator = await startEmulator(b.directive.attrs["emulator-args"]?.split(" ") ?? []);
  stops.push(emulator.stop);
  return { ...env, DOCAUTO_BASE_URL: emulator.url, DOCAUTO_API_KEY: emulator.apiKey };
}

/** Checks a script's output against `expect=REGEX` (when given). */
function checkExpect(b, out) {
  const expect = b.directive.attrs.expect;
  if (expect && !new RegExp(expect).test(out)) throw new Error(`output does not match /${expect}/: ${tail(out, 600)}`);
}

/** A script of a runtime: `node file.mjs`, `node file.cjs`, `deno run -A file.ts`, `bun file.ts`. */
async function runScript(b, ctx, runtime) {
  const dir = join(OUT, "run");
  let file;
  let cmd;
  let args;
  if (runtime === "node" || runtime === "cjs") {
    file = join(dir, `${slug(b)}.${runtime === "cjs" ? "cjs" : "mjs"}`);
    writeFileSync(file, await asJs(b, runtime === "cjs" ? "cjs" : "esm"));
    [cmd, args] = [process.execPath, [file]];
  } else if (runtime === "deno") {
    file = join(dir, `${slug(b)}.${b.lang}`);
    writeFileSync(file, b.code);
    [cmd, args] = [bin("deno"), ["run", "-A", "--no-check", file]];
  } else {
    file = join(dir, `${slug(b)}.${b.lang}`);
    writeFileSync(file, b.code);
    [cmd, args] = [bin("bun"), [file]];
  }
  const { env, stop } = await blockEnv(b, ctx);
  try {
    const { code, out } = await runProcess(cmd, args, {
      env: { ...env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      cwd: workDir(),
      ms: Number(b.directive.attrs.timeout ?? 60) * 1000,
    });
    if (code !== 0) throw new Error(`exited ${code}: ${tail(out)}`);
    checkExpect(b, out);
  } finally {
    await stop();
  }
}

/** `node --test file`: every test passes, and there is at least one. */
async function runNodeTest(b, ctx) {
  const file = join(OUT, "run", `${slug(b)}.test.mjs`);
  writeFileSync(file, await asJs(b));
  const { env, stop } = await blockEnv(b, ctx);
  try {
    const { code, out } = await runProcess(process.execPath, ["--test", "--test-reporter=tap", file], { env, cwd: workDir() });
    const count = (key) => Number((out.match(new RegExp(`^# ${key} (\\d+)`, "m")) ?? [])[1] ?? -1);
    if (code !== 0 || count("fail") !== 0 || count("pass") < 1) {
      throw new Error(`node --test: exit ${code}, ${count("pass")} passed, ${count("fail")} failed: ${tail(out)}`);
    }
  } finally {
    await stop();
  }
}

/** A server of a runtime, started with PORT; `deliveries=verify|handle` sends it signed webhooks. */
async function startServer(b, ctx, runtime) {
  const port = await freePort();
  const file = join(OUT, "run", `${slug(b)}.${runtime === "node" ? "mjs" : b.lang}`);
  writeFileSync(file, runtime === "node" ? await asJs(b) : b.code);
  const { env, stop: stopEnv } = await blockEnv(b, ctx);
  const [cmd, args] =
    runtime === "node"
      ? [process.execPath, [file]]
      : runtime === "deno"
        ? [bin("deno"), ["run", "-A", "--no-check", file]]
        : [bin("bun"), [file]];
  const proc = startProcess(cmd, args, { env: { ...env, PORT: String(port), DENO_NO_UPDATE_CHECK: "1" }, cwd: workDir() });
  const stop = async () => {
    await proc.stop();
    await stopEnv();
  };
  try {
    await waitForPort(port, proc);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `http://127.0.0.1:${port}`, stop, log: proc.log };
}

async function runServer(b, ctx, runtime) {
  const scenario = b.directive.attrs.deliveries;
  if (!scenario) throw new Error(`a ${b.directive.kind} block needs deliveries=verify|handle, or a page that names it`);
  const server = await startServer(b, ctx, runtime);
  try {
    await exerciseDeliveries(scenario, postTo(`${server.url}/`), ctx.signed).catch((e) => {
      throw new Error(`${e.message}\nserver log: ${tail(server.log(), 600)}`);
    });
  } finally {
    await server.stop();
  }
}

/**
 * Runs `fn` with this process's console silenced: an example run in this process (a route handler, an edge route)
 * prints what it handles, which is the example's output, not the report's.
 */
async function quietly(fn) {
  const saved = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    saved[level] = console[level];
    console[level] = () => {};
  }
  try {
    return await fn();
  } finally {
    Object.assign(console, saved);
  }
}

/** A Next.js-style route module: its `POST(request)` called with each delivery, in this process. */
async function runRouteHandler(b, ctx) {
  const file = join(OUT, "run", `${slug(b)}.mjs`);
  writeFileSync(file, await asJs(b));
  const { env, stop } = await blockEnv(b, ctx);
  Object.assign(process.env, env);
  try {
    const mod = await import(pathToFileURL(file).href);
    const handler = mod.POST;
    if (typeof handler !== "function") throw new Error("the module exports no POST(request)");
    await quietly(() => exerciseDeliveries(b.directive.attrs.deliveries ?? "verify", async (body, token) => {
      const res = await handler(new Request("https://app.example/api/webhooks", { method: "POST", headers: { "x-svc-signature": token }, body }));
      return { status: res.status, text: await res.text() };
    }, ctx.signed));
  } finally {
    await stop();
  }
}

/**
 * A route module of Vercel's edge runtime (`export const runtime = "edge"`, `POST(request)`): bundled with the
 * `edge-light` condition as Vercel bundles it (its `.wasm?module` imports compiled in the runtime's realm), run in
 * `edge-runtime`'s VM with `process.env` holding the block's environment, and called with the deliveries.
 */
async function runEdge(b, ctx) {
  const { EdgeRuntime } = await import("edge-runtime");
  const { bundle, wasmModuleImports } = await import("../js/bundle.mjs");
  const entry = join(OUT, "run", `${slug(b)}.${b.lang}`);
  writeFileSync(entry, b.code);
  const main = join(OUT, "run", `${slug(b)}-edge.mjs`);
  writeFileSync(main, `import * as route from ${JSON.stringify(entry)};
addEventListener("fetch", (event) => event.respondWith(route.POST(event.request)));\n`);
  const { code } = await bundle(main, { conditions: ["edge-light", "worker", "browser"], format: "iife", plugins: [wasmModuleImports] });
  const { env, stop } = await blockEnv(b, ctx);
  try {
    const runtime = new EdgeRuntime({
      initialCode: code,
      extend: (context) => Object.assign(context, { process: { env } }),
    });
    await quietly(() => exerciseDeliveries(b.directive.attrs.deliveries ?? "verify", async (body, token) => {
      const res = await runtime.dispatchFetch("https://app.example/api/webhooks", { method: "POST", headers: { "x-svc-signature": token }, body });
      return { status: res.status, text: await res.text() };
    }, ctx.signed));
  } finally {
    await stop();
  }
}

/** A Worker, bundled as wrangler bundles it and run by miniflare (workerd), with its bindings. */
async function runWorker(b, ctx) {
  const { Miniflare } = await import("miniflare");
  const { writeWorker } = await import("../js/bundle.mjs");
  const entry = join(OUT, "run", `${slug(b)}.${b.lang}`);
  writeFileSync(entry, b.code);
  const dir = join(OUT, "run", `${slug(b)}-worker/`);
  await writeWorker(entry, dir);
  const attrs = b.directive.attrs;
  const durableObjects = attrs["durable-objects"]
    ? Object.fromEntries(attrs["durable-objects"].split(",").map((pair) => pair.split(":")))
    : undefined;
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(dir, "worker.mjs"),
    compatibilityDate: "2025-09-01",
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    bindings: { DOCAUTO_BASE_URL: ctx.signed.baseUrl },
    ...(durableObjects ? { durableObjects } : {}),
    ...(attrs.d1 ? { d1Databases: attrs.d1.split(",") } : {}),
    ...(attrs.kv ? { kvNamespaces: attrs.kv.split(",") } : {}),
    // What the Worker prints is the example's, not the test's: kept out of the report (its verdicts say enough).
    handleRuntimeStdio(stdout, stderr) {
      stdout.resume();
      stderr.resume();
    },
  });
  try {
    await exerciseDeliveries(attrs.deliveries ?? "verify", async (body, token) => {
      const res = await mf.dispatchFetch("http://worker.example/", { method: "POST", headers: { "x-svc-signature": token }, body });
      return { status: res.status, text: await res.text() };
    }, ctx.signed);
  } finally {
    await mf.dispose();
  }
}

/** The import map of a page: each entry of the package to the site's copy (the browser files). */
const IMPORT_MAP = {
  imports: {
    docauto: "/pkg/index.js",
    "docauto/webhooks": "/pkg/webhooks/index.js",
    "docauto/realtime": "/pkg/realtime/index.js",
    "docauto/testing": "/pkg/testing/index.js",
    "docauto/emulator": "/pkg/emulator/index.js",
  },
};

const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".html": "text/html", ".json": "application/json" };

/**
 * A page's module in Chromium: served on 127.0.0.1 with the `html=NAME` block as its body, the package under
 * /pkg/ through an import map, every other path sent to the `server=NAME` block (started first); then played as
 * `playPage` says.
 */
async function runPage(b, ctx) {
  const attrs = b.directive.attrs;
  const html = attrs.html ? ctx.html.get(attrs.html) : "";
  if (attrs.html && html === undefined) throw new Error(`no <!-- html: ${attrs.html} --> block before it`);
  let backend = null;
  if (attrs.server) backend = await startBackend(attrs.server, ctx);
  const js = await asJs(b);
  const page = `<!doctype html><meta charset="utf-8"><title>${b.file}:${b.line}</title>
<script type="importmap">${JSON.stringify(IMPORT_MAP)}</script>
${html}
<script type="module" src="/block.js"></script>`;
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/") return res.writeHead(200, { "content-type": "text/html" }).end(page);
    if (path === "/block.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(js);
    if (path === "/favicon.ico") return res.writeHead(204).end();
    if (path.startsWith("/pkg/")) {
      const file = join(ROOT, "pkg", path.slice(5));
      if (!file.startsWith(join(ROOT, "pkg")) || !existsSync(file)) return res.writeHead(404).end();
      return res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
    }
    if (!backend) return res.writeHead(404).end();
    const target = new URL(backend.url);
    const forward = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", (e) => res.writeHead(502).end(e.message));
    req.pipe(forward);
  });
  try {
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    await playPage(`http://127.0.0.1:${server.address().port}/`, attrs, ctx);
  } finally {
    await new Promise((r) => server.close(r));
    server.closeAllConnections?.();
    if (backend) await backend.stop();
  }
}

/** The server block named `name` (a page's backend), started on a free port as `startServer` starts it. */
async function startBackend(name, ctx) {
  const serverBlock = ctx.named.get(name);
  if (!serverBlock) throw new Error(`no block named ${name}`);
  return startServer(serverBlock, ctx, { "node-server": "node", "deno-server": "deno", "bun-server": "bun" }[serverBlock.directive.kind]);
}

/**
 * Opens `url` in Chromium, whose fake microphone plays speech, and plays a page directive's attributes on it:
 * `click=SELECTOR` is clicked once the page has loaded; passes when the page's text or its console matches
 * `expect=REGEX` within `timeout=SECONDS` (30), with no page error and no console error; then `after=SELECTOR` is
 * clicked, and again no error may follow. The icon the browser asks for by itself (`/favicon.ico`) may be missing.
 */
async function playPage(url, attrs, ctx) {
  const browser = await ctx.chromium();
  const tab = await browser.newPage();
  const errors = [];
  const logs = [];
  tab.on("pageerror", (e) => errors.push(String(e)));
  tab.on("console", (m) => {
    if (m.type() !== "error") logs.push(m.text());
    else if (!m.location().url.endsWith("/favicon.ico")) errors.push(m.text());
  });
  try {
    await tab.goto(url);
    if (attrs.click) {
      await tab.waitForLoadState("load");
      await tab.click(attrs.click, { timeout: 10_000 });
    }
    const expect = new RegExp(attrs.expect ?? ".");
    const deadline = Date.now() + Number(attrs.timeout ?? 30) * 1000;
    for (;;) {
      if (errors.length) throw new Error(`page error: ${errors.join(" | ").slice(0, 600)}`);
      const text = `${await tab.evaluate(() => document.body?.innerText ?? "")}\n${logs.join("\n")}`;
      if (expect.test(text)) break;
      if (Date.now() > deadline) throw new Error(`the page never showed /${attrs.expect}/: ${tail(text, 600)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    if (attrs.after) {
      await tab.click(attrs.after, { timeout: 10_000 });
      await new Promise((r) => setTimeout(r, 500));
      if (errors.length) throw new Error(`page error after ${attrs.after}: ${errors.join(" | ").slice(0, 600)}`);
    }
  } finally {
    await tab.close().catch(() => {});
  }
}

/** Vite, a devDependency of the repository (package.json), at the version the bundler suite pins. */
const VITE = join(ROOT, "node_modules/vite");

/**
 * A Vite project made as the section that shows this `vite.config.mts` block tells a reader to make it, in a folder
 * of its own: the `html=NAME` block as index.html, the module of the page whose body is the `page=NAME` html block
 * as page.ts, the package copied into node_modules as `npm install` leaves it, and Vite linked beside it. The
 * `server=NAME` block runs first, against a fresh emulator, on a free port: the config's `:3000` (the server's
 * default port, which may be taken here) is replaced by that one. Then `vite` (its command, in the folder) serves
 * the page, which `playPage` plays as a page block's.
 */
async function runVite(b, ctx) {
  const attrs = b.directive.attrs;
  if (!existsSync(join(VITE, "bin/vite.js"))) throw new Error("Vite is not installed (npm ci)");
  const html = ctx.html.get(attrs.html);
  if (html === undefined) throw new Error(`no <!-- html: ${attrs.html} --> block`);
  const page = ctx.pages.get(attrs.page);
  if (!page) throw new Error(`no <!-- run: page html=${attrs.page} --> block`);
  const dir = join(OUT, "run", slug(b));
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  cpSync(join(ROOT, "pkg"), join(dir, "node_modules/docauto"), { recursive: true, dereference: true });
  symlinkSync(VITE, join(dir, "node_modules/vite"));
  // No "type": the package.json `npm install docauto` writes in an empty folder.
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true }));
  writeFileSync(join(dir, "index.html"), html);
  writeFileSync(join(dir, "page.ts"), page.code);
  const backend = await startBackend(attrs.server, ctx);
  let vite = null;
  try {
    writeFileSync(join(dir, "vite.config.mts"), b.code.replaceAll(":3000", `:${new URL(backend.url).port}`));
    const port = await freePort();
    vite = startProcess(process.execPath, [join(VITE, "bin/vite.js"), "--host", "127.0.0.1", "--port", String(port), "--strictPort"], { cwd: dir });
    await waitForPort(port, vite);
    await playPage(`http://127.0.0.1:${port}/`, attrs, ctx).catch((e) => {
      throw new Error(`${e.message}\nvite: ${tail(vite.log(), 600)}\nserver: ${tail(backend.log(), 600)}`);
    });
  } finally {
    if (vite) await vite.stop();
    await backend.stop();
  }
}

const RUNNERS = {
  node: (b, ctx) => runScript(b, ctx, "node"),
  cjs: (b, ctx) => runScript(b, ctx, "cjs"),
  deno: (b, ctx) => runScript(b, ctx, "deno"),
  bun: (b, ctx) => runScript(b, ctx, "bun"),
  "node-test": runNodeTest,
  "node-server": (b, ctx) => runServer(b, ctx, "node"),
  "deno-server": (b, ctx) => runServer(b, ctx, "deno"),
  "bun-server": (b, ctx) => runServer(b, ctx, "bun"),
  "route-handler": runRouteHandler,
  edge: runEdge,
  worker: runWorker,
  page: runPage,
  vite: runVite,
};

/** The runtimes a kind needs (`--only node` runs the Node ones). */
const RUNTIME_OF_KIND = {
  node: "node", cjs: "node", "node-test": "node", "node-server": "node", "route-handler": "node",
  deno: "deno", "deno-server": "deno", bun: "bun", "bun-server": "bun", worker: "workerd", edge: "edge-runtime",
  page: "chromium", vite: "chromium",
};

/** Where a block of each kind is type-checked (contexts.mjs), and a Vite config: in Node, where it runs. */
const ENV_OF = { ...ENV_OF_KIND, vite: "node" };

// ---------------------------------------------------------------------------------------------------------------
// Type checks

/**
 * Type-checks every TypeScript block (and every fragment) in its environment; resolves to a map from block to the
 * errors found in it (an empty list when it compiles).
 */
async function typeCheck(blocks) {
  const result = new Map();
  const groups = new Map();
  for (const b of blocks) {
    const d = b.directive;
    if (!d || d.kind === "html") continue;
    const isFragment = d.kind === "fragment";
    if (b.lang !== "ts" && !isFragment) continue;
    const context = isFragment ? CONTEXTS[d.context] : null;
    if (isFragment && !context) {
      result.set(b, [`unknown fragment context "${d.context}" (tests/docs/contexts.mjs)`]);
      continue;
    }
    const env = isFragment ? context.env : ENV_OF[d.kind];
    if (!env) continue;
    if (!groups.has(env)) groups.set(env, []);
    groups.get(env).push({ b, prelude: context?.prelude ?? "" });
  }
  // The environments are checked side by side (each tsc is one thread).
  await Promise.all([...groups].map(([env, members]) => checkGroup(env, members, result)));
  return result;
}

/** Type-checks one environment's blocks, adding their errors to `result`. */
async function checkGroup(env, members, result) {
  const dir = join(OUT, "types", env);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = new Map();
  members.forEach(({ b, prelude }, i) => {
    const name = `b${i}.${b.lang}`;
    const head = prelude ? `${prelude}\n` : "";
    // `export {}` makes a fragment a module (top-level await, no global clashes between blocks).
    writeFileSync(join(dir, name), `${head}${b.code}\nexport {};\n`);
    files.set(name, { b, offset: head ? head.split("\n").length - 1 : 0 });
    result.set(b, []);
  });
  let out;
  if (env === "deno") {
    // A copy of the package, as `npm install` leaves it: the repository's node_modules/docauto is a link to pkg/,
    // whose `.d.ts` Deno then reads beside their `.js` files (as it would for `npm link`), which a real
    // installation never shows.
    cpSync(join(ROOT, "pkg"), join(dir, "node_modules/docauto"), { recursive: true, dereference: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true, dependencies: { docauto: "*" } }));
    const names = [...files.keys()];
    const { code, out: text } = await runProcess(bin("deno"), ["check", "--quiet", ...names], { cwd: dir, env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" }, ms: 180_000 });
    out = code === 0 ? "" : text;
    for (const m of out.matchAll(/(TS\d+ \[ERROR\]: [^\n]*)\n[\s\S]*?at file:\/\/\S*\/(b\d+\.\w+):(\d+):(\d+)/g)) {
      const f = files.get(m[2]);
      if (f) result.get(f.b).push(`line ${Number(m[3]) - f.offset} (deno check): ${m[1]}`);
    }
    if (code !== 0 && [...files.values()].every((f) => result.get(f.b).length === 0)) {
      for (const f of files.values()) result.get(f.b).push(`deno check failed: ${tail(out, 400)}`);
    }
    return;
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  if (members.some(({ b }) => b.directive.kind === "vite")) {
    // A Vite config imports "vite": linked into the folder, as the reader's project has it installed.
    mkdirSync(join(dir, "node_modules"), { recursive: true });
    symlinkSync(VITE, join(dir, "node_modules/vite"));
  }
  const options = { ...TSCONFIG[env], strict: true, noEmit: true, skipLibCheck: true, allowJs: true, checkJs: true, allowImportingTsExtensions: true };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: options, files: [...files.keys()] }, null, 2));
  const { code, out: text } = await runProcess(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json", "--pretty", "false"], { cwd: dir, ms: 180_000 });
  out = text;
  let placed = 0;
  for (const m of out.matchAll(/^(b\d+\.\w+)\((\d+),(\d+)\): (error TS\d+: .*)$/gm)) {
    const f = files.get(m[1]);
    if (!f) continue;
    placed++;
    result.get(f.b).push(`line ${Number(m[2]) - f.offset} (tsc --strict): ${m[4]}`);
  }
  if (code !== 0 && placed === 0) {
    for (const f of files.values()) result.get(f.b).push(`tsc failed: ${tail(out, 400)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  const argv = process.argv.slice(2);
  const onlyAt = argv.indexOf("--only");
  const only = onlyAt >= 0 ? argv[onlyAt + 1].split(",") : null;
  const wanted = argv.filter((a, i) => a.endsWith(".md") && (onlyAt < 0 || i !== onlyAt + 1));
  const files = wanted.length ? wanted : docFiles();
  rmSync(join(OUT, "run"), { recursive: true, force: true });
  mkdirSync(join(OUT, "run"), { recursive: true });
  await writeSamples(workDir());

  const blocksIn = (f) => blocksOf(f, readFileSync(join(ROOT, f), "utf8"));
  const all = files.flatMap(blocksIn);
  // What a block names (an html block, a server, a page by its html block) is looked up in every document, so
  // that a file run alone may use another's blocks.
  const html = new Map();
  const named = new Map();
  const pages = new Map();
  for (const b of [...new Set([...docFiles(), ...files])].flatMap(blocksIn)) {
    if (b.directive?.kind === "html") html.set(b.directive.name, b.code);
    if (b.directive?.attrs?.name) named.set(b.directive.attrs.name, b);
    if (b.directive?.kind === "page" && b.directive.attrs.html) pages.set(b.directive.attrs.html, b);
  }
  const code = all.filter((b) => b.lang === "js" || b.lang === "ts");
  let passed = 0;
  let failed = 0;
  const say = (ok, b, why = "") => {
    if (ok) passed++;
    else failed++;
    const where = `${b.file}:${b.line}`;
    console.log(ok ? `ok ${where}` : `not ok ${where} ${why.replace(/\s*\n\s*/g, " | ")}`);
  };

  // The type checks (tsc per environment, deno check) run while the blocks run; their verdicts join at the end.
  const started = Date.now();
  const typesDone = only ? Promise.resolve(new Map()) : typeCheck(code).then((t) => {
    if (process.env.DOCS_TIMING) console.log(`(type checks: ${Date.now() - started} ms)`);
    return t;
  });
  let browser = null;
  const signed = await deliveries();
  const ctx = {
    signed,
    html,
    named,
    pages,
    async chromium() {
      if (!browser) {
        const { launchChromium } = await import("../js/chromium.mjs");
        const { speechWav } = await import("../js/realtime/harness.mjs");
        browser = await launchChromium({ microphone: speechWav() });
      }
      return browser;
    },
  };
  try {
    // Each block's verdict, printed in the documents' order once all have run. Blocks run three at a time (most
    // of their time is spent waiting on a process, a browser or a timer); the ones that run inside this process
    // (route handlers and edge routes: they set process.env and silence the console) run alone, after the others.
    const verdicts = new Map();
    const jobs = [];
    const typed = new Map();
    for (const b of code) {
      const d = b.directive;
      if (!d) {
        verdicts.set(b, [false, b.directiveError ?? "no <!-- run: ... --> or <!-- fragment: ... --> directive before it"]);
        continue;
      }
      const runner = d.kind === "fragment" ? null : RUNNERS[d.kind];
      const backend = d.attrs.name && !d.attrs.deliveries && ["node-server", "deno-server", "bun-server"].includes(d.kind);
      if (d.kind === "fragment" || backend) {
        // A fragment is type-checked only; a page's backend runs with its page and is type-checked here.
        if (!only) typed.set(b, []);
        continue;
      }
      if (!runner) {
        verdicts.set(b, [false, `unknown kind "${d.kind}" (${Object.keys(RUNNERS).join(", ")})`]);
        continue;
      }
      if (only && !only.includes(RUNTIME_OF_KIND[d.kind])) continue;
      jobs.push(b);
    }
    const run = async (b) => {
      const errors = [];
      try {
        await RUNNERS[b.directive.kind](b, ctx);
      } catch (e) {
        errors.push(e?.message ?? String(e));
      }
      typed.set(b, errors);
    };
    const alone = new Set(["route-handler", "edge"]);
    const shared = jobs.filter((b) => !alone.has(b.directive.kind));
    const width = Number(process.env.DOCS_CONCURRENCY ?? 3);
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (shared.length) await run(shared.shift());
      }),
    );
    for (const b of jobs.filter((j) => alone.has(j.directive.kind))) await run(b);
    const types = await typesDone;
    for (const [b, errors] of typed) {
      const all = [...errors, ...(types.get(b) ?? [])];
      verdicts.set(b, [all.length === 0, all.join("; ")]);
    }
    if (process.env.DOCS_TIMING) console.log(`(all blocks: ${Date.now() - started} ms)`);
    for (const b of code) if (verdicts.has(b)) say(verdicts.get(b)[0], b, verdicts.get(b)[1]);
    if (!only) {
      const problems = await checkLinks(ROOT);
      for (const problem of problems) {
        failed++;
        console.log(`not ok ${problem}`);
      }
      if (problems.length === 0) {
        passed++;
        console.log("ok links: every relative link resolves (the shipped Markdown's inside the package)");
      }
    }
  } finally {
    await signed.close();
    if (browser) await browser.close();
    rmSync(OUT, { recursive: true, force: true });
  }
  console.log(`RESULT ${JSON.stringify({ suite: "docs", passed, failed })}`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0;
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
