// The bundler suite: apps of our own, built with the tools our users ship with (the versions pinned in this folder's
// package.json) from the packed tarball installed as a user installs it, then run: pages in Chromium and in WebKit
// (WebKitGTK's MiniBrowser, tests/js/webkit.mjs), Node bundles in
// Node, Next.js route handlers under `next start` answering a delivery signed by jose (an oracle that shares nothing
// with the package). Each case prints `RESULT {"suite","passed","failed"}`; type checks print `CHECK {"name","ok"}`
// (reported by cargo xtask test, not counted as tests).
//
//   node tests/bundlers/run.mjs <tarball> [case-name-substring ...]
//
// Needs `npm ci` done in this folder and in next-16.2/ (cargo xtask test does it). Builds happen in .work/ (ignored).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SignJWT, importJWK } from "jose";
import { launchChromium } from "../js/chromium.mjs";
import { launchWebKit } from "../js/webkit.mjs";
import { serveStatic } from "../../www/static.mjs";

const SUITE = dirname(fileURLToPath(import.meta.url));
const WORK = join(SUITE, ".work");
const APPS = join(SUITE, "apps");
const BIN = join(SUITE, "node_modules", ".bin");
const [tarballArg, ...only] = process.argv.slice(2);
const tarball = tarballArg && resolve(tarballArg);
if (!tarball || !existsSync(tarball)) {
  console.error("usage: node tests/bundlers/run.mjs <docauto tarball> [case ...]");
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------------------------
// Processes

/** Runs a command to completion; resolves { code, out }. Never rejects. */
function exec(cmd, args, { cwd, env = {}, timeoutMs = 300_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => killTree(child), timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: -1, out: out + String(e) });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Starts a long-running server and waits until its output matches `ready` (a RegExp with the URL in group 1). */
function startServer(cmd, args, { cwd, env = {}, ready, timeoutMs = 120_000 }) {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killTree(child);
      reject(new Error(`${cmd} did not become ready in ${timeoutMs} ms:\n${out.slice(-2000)}`));
    }, timeoutMs);
    const onData = (d) => {
      out += d;
      const m = out.replace(/\x1b\[[0-9;]*m/g, "").match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], stop: () => killTree(child), output: () => out });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (${code}) before it was ready:\n${out.slice(-2000)}`));
    });
  });
}

function killTree(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The scripted API server: a run, a 404 envelope, and deliveries signed by jose with the suite's test key.

const { privateJwk } = JSON.parse(readFileSync(join(SUITE, "key.json"), "utf8"));
const signingKey = await importJWK(privateJwk, "ES256");

/** A delivery as the service sends it (spec, "Signature"): the raw body and its x-svc-signature, signed by jose. */
async function signedDelivery() {
  const eventId = `evt_bundlers_${Math.random().toString(36).slice(2)}`;
  const body = JSON.stringify({
    eventId,
    type: "run.completed",
    processingId: "exr_1",
    occurredAt: new Date().toISOString(),
    data: { object: "extract_run", id: "exr_1", status: "processed" },
  });
  const now = Math.floor(Date.now() / 1000);
  const signature = await new SignJWT({
    iss: "svc-process",
    processingId: "exr_1",
    eventId,
    type: "run.completed",
    bodySha256: createHash("sha256").update(body).digest("base64url"),
    iat: now,
    exp: now + 300,
  })
    .setProtectedHeader({ alg: "ES256", kid: privateJwk.kid })
    .sign(signingKey);
  return { eventId, body, signature };
}

async function startApi() {
  const server = createServer(async (req, res) => {
    const cors = {
      "access-control-allow-origin": "*",
      "access-control-allow-headers": "*",
      "access-control-expose-headers": "*",
    };
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...cors, "access-control-allow-methods": "GET, POST" });
      return res.end();
    }
    const path = new URL(req.url, "http://x").pathname;
    const json = (status, value, extra = {}) => {
      res.writeHead(status, { ...cors, "content-type": "application/json", ...extra });
      res.end(JSON.stringify(value));
    };
    if (path === "/delivery") return json(200, await signedDelivery());
    if (req.headers.authorization !== "Bearer sk_test_bundlers") {
      return json(401, { code: "unauthorized", message: "missing bearer", retryable: false, requestId: "req_1" });
    }
    if (path === "/v1/runs/exr_1") {
      return json(200, { object: "extract_run", id: "exr_1", status: "processed", statusUrl: "/v1/runs/exr_1" });
    }
    json(404, { code: "not_found", message: "no such run", retryable: false, requestId: "req_2" }, { "x-request-id": "req_2" });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

// ---------------------------------------------------------------------------------------------------------------
// Cases

/**
 * Copies the app folders named into a fresh `<base>/.work/<name>/` (shared/ always comes along); returns its path.
 * `base` is the folder whose node_modules the app resolves its tools from (docauto from this suite's, further up).
 */
function workdir(name, apps, base = SUITE) {
  const dir = join(base, ".work", name.replace(/[^a-z0-9.]+/gi, "-"));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const app of ["shared", ...apps]) cpSync(join(APPS, app), join(dir, app), { recursive: true });
  return dir;
}

function must(res, what) {
  if (res.code !== 0) throw new Error(`${what} failed (exit ${res.code}):\n${res.out.slice(-4000)}`);
  return res.out;
}

/** Copies the package's wasm modules into `dest` (the README's esbuild recipe). */
function copyWasm(dest) {
  mkdirSync(dest, { recursive: true });
  const pkg = join(SUITE, "node_modules", "docauto");
  for (const dir of ["", "webhooks", "realtime", "testing", "emulator"]) {
    for (const f of readdirSync(join(pkg, dir, "wasm")).filter((f) => f.endsWith(".wasm"))) {
      cpSync(join(pkg, dir, "wasm", f), join(dest, f));
    }
  }
}

// Every page runs in each engine, one browser per engine for the whole suite (started on first use).
const ENGINES = { chromium: launchChromium, webkit: () => launchWebKit({ record: true }) };
const browsers = {};
const browserOf = async (engine) => (browsers[engine] ??= ENGINES[engine]());

/** Opens `url` in a new page of `engine`, runs `fn(page, errors)` and closes the page. */
async function inPage(engine, url, fn) {
  const p = await (await browserOf(engine)).newPage();
  const errors = [];
  p.on("pageerror", (e) => errors.push(String(e)));
  p.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  try {
    return await fn(p, errors);
  } finally {
    await p.close();
  }
}

/** The page's own checks (`window.__bundlerResult`) in each engine, each line prefixed with the engine. */
async function page(url) {
  const all = { passed: 0, failed: 0, lines: [] };
  for (const engine of Object.keys(ENGINES)) {
    const result = await inPage(engine, url, async (p, errors) => {
      try {
        await p.goto(url);
        await p.waitForFunction(() => window.__bundlerResult, null, { timeout: 60_000 });
        return await p.evaluate(() => window.__bundlerResult);
      } catch (e) {
        return { passed: 0, failed: 1, lines: [`FAIL page ${url}: ${e.message} ${errors.join(" | ")}`] };
      }
    }).catch((e) => ({ passed: 0, failed: 1, lines: [`FAIL ${engine} did not start: ${e.message}`] }));
    all.passed += result.passed;
    all.failed += result.failed;
    all.lines.push(...result.lines.map((l) => `${engine}: ${l}`));
  }
  return all;
}

async function servedPage(dir, api) {
  const srv = await serveStatic({ "/": dir }, { index: "/index.html" });
  try {
    return await page(`${srv.url}/index.html?api=${encodeURIComponent(api)}`);
  } finally {
    await srv.close();
  }
}

const cases = [
  {
    name: "vite build",
    async run(api) {
      const dir = workdir(this.name, ["web"]);
      must(await exec(join(BIN, "vite"), ["build", "--outDir", "dist", "--emptyOutDir"], { cwd: join(dir, "web") }), "vite build");
      return servedPage(join(dir, "web", "dist"), api);
    },
  },
  {
    name: "vite dev server",
    async run(api) {
      const dir = workdir(this.name, ["web"]);
      const port = await freePort();
      const srv = await startServer(join(BIN, "vite"), ["--host", "127.0.0.1", "--port", String(port), "--strictPort"], {
        cwd: join(dir, "web"),
        ready: /Local:\s+(http:\/\/127\.0\.0\.1:\d+)\//,
      });
      try {
        return await page(`${srv.url}/index.html?api=${encodeURIComponent(api)}`);
      } finally {
        srv.stop();
      }
    },
  },
  {
    name: "webpack",
    async run(api) {
      const dir = workdir(this.name, ["web"]);
      const web = join(dir, "web");
      // webpack's own API with a plain production config (the CLI is a separate package users may not have).
      writeFileSync(
        join(web, "build.mjs"),
        `import webpack from "webpack";
webpack({ mode: "production", context: process.cwd(), entry: "./main.js", output: { path: process.cwd() + "/dist", filename: "main.js", clean: true } }, (err, stats) => {
  if (err || stats.hasErrors()) { console.error(err ?? stats.toString("errors-only")); process.exit(1); }
  console.log(stats.toString("errors-warnings"));
});
`,
      );
      must(await exec("node", ["build.mjs"], { cwd: web }), "webpack");
      writeFileSync(join(web, "dist", "index.html"), readFileSync(join(web, "index.html"), "utf8"));
      return servedPage(join(web, "dist"), api);
    },
  },
  {
    name: "esbuild (browser)",
    async run(api) {
      const dir = workdir(this.name, ["web"]);
      const web = join(dir, "web");
      // The README's recipe: bundle, then copy every module the bundle loads into `wasm/` next to it.
      must(await exec(join(BIN, "esbuild"), ["main.js", "--bundle", "--format=esm", "--outdir=dist"], { cwd: web }), "esbuild");
      copyWasm(join(web, "dist", "wasm"));
      writeFileSync(join(web, "dist", "index.html"), readFileSync(join(web, "index.html"), "utf8"));
      return servedPage(join(web, "dist"), api);
    },
  },
  {
    name: "esbuild (node, bundled with the wasm copied)",
    async run(api) {
      const dir = workdir(this.name, ["node"]);
      const app = join(dir, "node");
      must(
        await exec(join(BIN, "esbuild"), ["main.js", "--bundle", "--platform=node", "--format=esm", "--outfile=dist/main.mjs"], { cwd: app }),
        "esbuild",
      );
      copyWasm(join(app, "dist", "wasm"));
      return JSON.parse(must(await exec("node", ["dist/main.mjs", api], { cwd: app }), "node dist/main.mjs").trim().split("\n").pop());
    },
  },
  {
    name: "esbuild (node, --packages=external)",
    async run(api) {
      const dir = workdir(this.name, ["node"]);
      const app = join(dir, "node");
      must(
        await exec(
          join(BIN, "esbuild"),
          ["main.js", "--bundle", "--platform=node", "--format=esm", "--packages=external", "--outfile=dist/main.mjs"],
          { cwd: app },
        ),
        "esbuild",
      );
      return JSON.parse(must(await exec("node", ["dist/main.mjs", api], { cwd: app }), "node dist/main.mjs").trim().split("\n").pop());
    },
  },
  ...nextCases(),
];

/**
 * Next.js: the app's edge and Node.js route handlers and its client page, built by Turbopack and by webpack, run with
 * `next start` (or, for `output: "standalone"`, the traced server copied elsewhere, as a deployment copies it).
 * Next.js 16.3 and later cannot build any edge route handler with webpack (a route importing nothing fails with
 * ENOENT route_client-reference-manifest.js, upstream): that case is built with the pinned 16.2 in next-16.2/.
 */
function nextCases() {
  const make = (name, { base = SUITE, args = [], routes, page = true, config = {}, standalone = false }) => ({
    name,
    async run(api) {
      const next = join(base, "node_modules/next/dist/bin/next");
      const dir = workdir(name, ["next"], base);
      const app = join(dir, "next");
      for (const route of ["edge", "node"]) {
        if (!routes.includes(route)) rmSync(join(app, "app", "api", route), { recursive: true });
      }
      if (!page) rmSync(join(app, "app", "realtime"), { recursive: true });
      // The roots: this suite folder holds the node_modules the app resolves docauto from.
      const full = { ...config, turbopack: { root: SUITE }, outputFileTracingRoot: SUITE };
      writeFileSync(join(app, "next.config.mjs"), `export default ${JSON.stringify(full)};\n`);
      const env = { NEXT_TELEMETRY_DISABLED: "1", DOCAUTO_BASE_URL: api };
      must(await exec("node", [next, "build", ...args], { cwd: app, env, timeoutMs: 600_000 }), `next build ${args.join(" ")}`);
      const port = await freePort();
      let srv;
      if (standalone) {
        // A deployment copies the traced output elsewhere: the build folder is removed, so nothing resolves from it.
        const deploy = join(WORK, `${name.replace(/[^a-z0-9.]+/gi, "-")}-deployed`);
        rmSync(deploy, { recursive: true, force: true });
        cpSync(join(app, ".next", "standalone"), deploy, { recursive: true });
        const server = existsSync(join(deploy, "server.js")) ? deploy : join(deploy, relativeApp(app));
        // Next's deployment step: the client assets are not part of the traced output.
        cpSync(join(app, ".next", "static"), join(server, ".next", "static"), { recursive: true });
        rmSync(dir, { recursive: true, force: true });
        srv = await startServer("node", ["server.js"], {
          cwd: server,
          env: { ...env, PORT: String(port), HOSTNAME: "127.0.0.1" },
          ready: /Local:\s+(http:\/\/[0-9.]+:\d+)/,
        });
      } else {
        srv = await startServer("node", [next, "start", "-H", "127.0.0.1", "-p", String(port)], {
          cwd: app,
          env,
          ready: /Local:\s+(http:\/\/[0-9.]+:\d+)/,
        });
      }
      const origin = `http://127.0.0.1:${port}`;
      const lines = [];
      let passed = 0;
      let failed = 0;
      const check = async (what, fn) => {
        try {
          await fn();
          passed++;
          lines.push(`ok   ${what}`);
        } catch (e) {
          failed++;
          lines.push(`FAIL ${what}: ${e.message}`);
        }
      };
      try {
        for (const route of routes) {
          await check(`${route} route: a delivery signed by jose is 200 with its event id`, async () => {
            const d = await signedDelivery();
            const r = await fetch(`${origin}/api/${route}`, { method: "POST", headers: { "x-svc-signature": d.signature }, body: d.body });
            const text = await r.text();
            if (r.status !== 200 || JSON.parse(text).received !== d.eventId) throw new Error(`${r.status} ${text}`);
          });
          await check(`${route} route: the same delivery with a tampered body is 400 body_mismatch`, async () => {
            const d = await signedDelivery();
            const r = await fetch(`${origin}/api/${route}`, {
              method: "POST",
              headers: { "x-svc-signature": d.signature },
              body: d.body.replace("processed", "failed"),
            });
            const text = await r.text();
            if (r.status !== 400 || JSON.parse(text).error !== "body_mismatch") throw new Error(`${r.status} ${text}`);
          });
          await check(`${route} route: DocAuto (root entry) reads a run from the scripted server`, async () => {
            const r = await fetch(`${origin}/api/${route}`);
            const text = await r.text();
            if (r.status !== 200 || text !== `{"id":"exr_1","status":"processed"}`) throw new Error(`${r.status} ${text}`);
          });
          await check(`${route} route: DocAuto through an in-process docauto/emulator lists its agents`, async () => {
            const r = await fetch(`${origin}/api/${route}?emulator`);
            const text = await r.text();
            if (r.status !== 200 || !JSON.parse(text).agents?.includes("agt_contract_review")) throw new Error(`${r.status} ${text}`);
          });
        }
        for (const engine of page ? Object.keys(ENGINES) : []) {
          await check(`"use client" page importing docauto/realtime: rendered, then a transcriber constructed in ${engine}`, () =>
            inPage(engine, `${origin}/realtime`, async (p, errors) => {
              const r = await p.goto(`${origin}/realtime`);
              if (r.status() !== 200) throw new Error(`status ${r.status()}`);
              await p.waitForFunction(() => document.getElementById("state")?.textContent !== "loading", null, { timeout: 30_000 });
              const state = await p.evaluate(() => document.getElementById("state").textContent);
              if (state !== "constructed") throw new Error(`state ${state} ${errors.join(" | ")}`);
            }),
          );
        }
      } finally {
        srv.stop();
      }
      return { passed, failed, lines };
    },
  });
  return [
    make("next (Turbopack): edge and Node.js routes, client page", { routes: ["edge", "node"] }),
    make("next (webpack): Node.js route, client page", { args: ["--webpack"], routes: ["node"] }),
    make("next 16.2 (webpack): edge route", {
      base: join(SUITE, "next-16.2"),
      args: ["--webpack"],
      routes: ["edge"],
      page: false,
    }),
    make('next (Turbopack, output: "standalone", deployed copy)', { routes: ["edge", "node"], config: { output: "standalone" }, standalone: true }),
  ];
}

/** The app folder's path inside a standalone output (Next nests it under the tracing root's relative path). */
function relativeApp(app) {
  return app.slice(SUITE.length + 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Type checks: one usage file under node16 (CommonJS and ES module projects) and bundler resolution, with
// TypeScript 5.9 and 7, against the installed tarball.

async function typeChecks() {
  const compilers = [
    ["TypeScript 5.9", join(SUITE, "node_modules/typescript/bin/tsc")],
    ["TypeScript 7", join(SUITE, "node_modules/typescript7/bin/tsc")],
  ];
  const modes = [
    ["node16, CommonJS project", "commonjs", { module: "node16", moduleResolution: "node16" }],
    ["node16, ES module project", "module", { module: "node16", moduleResolution: "node16" }],
    ["bundler", "module", { module: "esnext", moduleResolution: "bundler" }],
  ];
  for (const [ts, tsc] of compilers) {
    for (const [mode, type, options] of modes) {
      const name = `tsc (${ts}, ${mode})`;
      if (only.length && !only.some((o) => name.includes(o))) continue;
      const dir = join(WORK, `tsc-${ts}-${mode}`.replace(/[^a-z0-9.]+/gi, "-"));
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      cpSync(join(APPS, "tsc", "usage.ts"), join(dir, "usage.ts"));
      writeFileSync(join(dir, "package.json"), JSON.stringify({ type }));
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: { strict: true, noEmit: true, target: "es2022", lib: ["es2022", "dom"], types: [], ...options },
          files: ["usage.ts"],
        }),
      );
      const res = await exec("node", [tsc, "-p", "tsconfig.json"], { cwd: dir });
      if (res.code !== 0) console.log(res.out);
      console.log(`CHECK ${JSON.stringify({ name, ok: res.code === 0 })}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------

const installed = await exec("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", tarball], { cwd: SUITE });
if (installed.code !== 0) {
  console.log(installed.out);
  console.log(`RESULT ${JSON.stringify({ suite: "bundlers: install the packed tarball", passed: 0, failed: 1 })}`);
  process.exit(1);
}
const api = await startApi();
let anyFailed = false;
try {
  for (const c of cases) {
    if (only.length && !only.some((o) => c.name.includes(o))) continue;
    const started = Date.now();
    let result;
    try {
      result = await c.run(api.url);
    } catch (e) {
      result = { passed: 0, failed: 1, lines: [`FAIL ${c.name}: ${e.message}`] };
    }
    for (const l of result.lines) console.log(`  ${l}`);
    console.log(`RESULT ${JSON.stringify({ suite: `bundlers: ${c.name}`, passed: result.passed, failed: result.failed })} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    anyFailed ||= result.failed > 0 || result.passed === 0;
  }
  await typeChecks();
} finally {
  api.close();
  for (const browser of Object.values(browsers)) await (await browser.catch(() => undefined))?.close();
}
process.exit(anyFailed ? 1 : 0);
