// Shared setup of the client's end-to-end tests: load the SDK, start the emulator, small helpers.
//
// The SDK comes from a folder of `wasm-bindgen --target web` output: DOCAUTO_GLUE_DIR, else the built package's
// (pkg/wasm/, from `cargo xtask build`), its glue instantiated here (initSync) plus its errors.js snippet. Not through
// pkg/node.js: that entry is one file with its own copy of the glue (`cargo xtask build` bundles it), so the instance
// `wasmMemoryBytes` reads would not be the one the tests call; the package entries have their own suites.
import { spawn } from "node:child_process";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { createServer } from "node:http";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { once } from "node:events";
import { readWasmIn } from "../common.mjs";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const KEY = "sk_test_docauto";

function findFile(dir, name) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = findFile(path, name);
      if (found) return found;
    } else if (entry.name === name) {
      return path;
    }
  }
  return undefined;
}

/**
 * The size in bytes of the wasm memory of the SDK `loadSdk` loaded (the same glue module instance, whose
 * `initSync()` returns the instance it already has). Wasm memory only grows, so growth across a call bounds what the
 * call held in wasm at once.
 */
export async function wasmMemoryBytes() {
  const glue = await import(pathToFileURL(join(glueDir(), "docauto.js")).href);
  // The module's exports have minified names (xtask/src/minify.rs): its memory is the one Memory among them.
  const memory = Object.values(glue.initSync()).find((v) => v instanceof WebAssembly.Memory);
  return memory.buffer.byteLength;
}

/** The glue folder the SDK is loaded from: `DOCAUTO_GLUE_DIR`, else the built package's `wasm/`. */
function glueDir() {
  const dir = process.env.DOCAUTO_GLUE_DIR ?? join(ROOT, "pkg", "wasm");
  if (!existsSync(join(dir, "docauto.js"))) {
    throw new Error(`${dir}/docauto.js is missing: run \`cargo xtask build\` (or set DOCAUTO_GLUE_DIR)`);
  }
  return dir;
}

/**
 * The SDK's exports: `DocAuto`, `validateExtractionSchema` and the error classes, from the glue folder `dir` (by
 * default [glueDir]), instantiated once (`initSync` keeps the instance it has).
 */
export async function loadSdk(dir = glueDir()) {
  const glue = await import(pathToFileURL(join(dir, "docauto.js")).href);
  glue.initSync({ module: readWasmIn(dir) });
  const errors = await import(pathToFileURL(findFile(join(dir, "snippets"), "errors.js")).href);
  return { ...glue, ...errors };
}

/** Starts the emulator on a free port; resolves to `{ baseUrl, control(path, body), stop() }`. */
export async function startEmulator(extraArgs = []) {
  const bin = process.env.DOCAUTO_EMULATOR ?? join(ROOT, "target", "debug", "docauto-emulator");
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`cargo build -p docauto-emulator\``);
  const child = spawn(
    bin,
    ["--addr", "127.0.0.1:0", "--control", "--time-scale", "0.01", "--allow-http-webhooks", ...extraArgs],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let buffered = "";
  const baseUrl = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("emulator did not start within 20 s")), 20_000);
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      const m = /docauto emulator listening on (http:\/\/\S+)/.exec(buffered);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ""));
      }
    });
    child.on("exit", (code) => reject(new Error(`emulator exited with ${code}`)));
  });
  child.stdout.resume();
  return {
    baseUrl,
    /** A control API call (`/__emulator/...`). */
    async control(method, path, body) {
      const r = await fetch(`${baseUrl}/__emulator${path}`, {
        method,
        headers: body ? { "content-type": "application/json" } : {},
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await r.text();
      if (!r.ok) throw new Error(`control ${method} ${path}: ${r.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    async stop() {
      child.kill("SIGINT");
      await once(child, "exit").catch(() => {});
    },
  };
}

/** A fetch that records every request (url, method, headers) and forwards to the global fetch. */
export function fetchSpy() {
  const calls = [];
  const spy = async (url, init = {}) => {
    const headers = new Headers(init.headers ?? {});
    calls.push({ url: String(url), method: init.method ?? "GET", headers: Object.fromEntries(headers) });
    return fetch(url, init);
  };
  return { spy, calls };
}

/** A local http server serving `files` (`{ "/path": { body, type } }`); resolves to `{ url, close() }`. */
export async function serveFiles(files) {
  const server = createServer((req, res) => {
    const file = files[req.url ?? ""];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    const body = Buffer.from(file.body);
    res.writeHead(200, { "content-type": file.type, "content-length": body.length }).end(body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

/** Asserts that `promise` rejects with an instance of `Class` whose `code` is `code`; returns the error. */
export async function rejectsWith(assert, promise, Class, code) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof Class, `expected ${Class.name}, got ${e?.name}: ${e?.message}`);
    if (code !== undefined) assert.equal(e.code, code, `code of ${e.name}: ${e.message}`);
    return e;
  }
  assert.fail(`expected ${Class.name} (${code}), but the call succeeded`);
}
