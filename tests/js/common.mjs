// Helpers shared by the runners that live in Node-compatible runtimes (Node, Deno, Bun).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const FIXTURES_URL = new URL("../../target/docauto-js/fixtures.json", import.meta.url);

export function loadFixtures() {
  return JSON.parse(readFileSync(FIXTURES_URL, "utf8"));
}

/** A JS module's text without its comments (block and whole-line): a doc comment may hold an import example. */
export function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The specifiers that JS code (comments removed: [withoutComments]) imports, statically or with `import()`. */
export function importsOf(code) {
  return [...code.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]);
}

/** Prints the machine-readable count line that cargo xtask test sums. */
export function report(suite, r) {
  console.log(`RESULT ${JSON.stringify({ suite, passed: r.passed, failed: r.failed })}`);
}

/** Checks that the bare specifier resolved through the expected `exports` condition. */
export function resolvedCheck(resolved, file) {
  const ok = resolved.endsWith(`/pkg/${file}`);
  console.log(`${ok ? "ok  " : "FAIL"} "docauto" resolves to ${file} (got ${resolved})`);
  return { passed: ok ? 1 : 0, failed: ok ? 0 : 1 };
}

/**
 * The bytes of the one wasm module in a glue folder (`DOCAUTO_GLUE_DIR`, a `wasm/` folder of the package): its file
 * is named per entry (`docauto-client.wasm`, ...; `docauto_bg.wasm` in builds before 0.2.0).
 */
export function readWasmIn(dir) {
  const name = readdirSync(dir).find((f) => f.endsWith(".wasm"));
  if (!name) throw new Error(`no .wasm in ${dir}`);
  return readFileSync(join(dir, name));
}

/**
 * The runtimes a driver of several runtimes runs: all of `names`, or those named by `--only a,b` on its command line
 * (`cargo xtask test` runs the Node suites again on each pinned Node line with `--only node`). A name it does not
 * know is an error, so a typo never turns into a run of nothing.
 */
export function onlyRuntimes(names, argv = process.argv) {
  const at = argv.indexOf("--only");
  if (at < 0) return names;
  const wanted = String(argv[at + 1] ?? "").split(",").filter(Boolean);
  const unknown = wanted.filter((n) => !names.includes(n));
  if (wanted.length === 0 || unknown.length > 0) {
    throw new Error(`--only ${argv[at + 1] ?? ""}: expected a comma-separated list of ${names.join(", ")}`);
  }
  return names.filter((n) => wanted.includes(n));
}

/**
 * A server on 127.0.0.1 that accepts every request and never answers (the browser pages' timeout checks); resolves to
 * `{ url, close() }`. CORS never comes into it: no answer arrives to check.
 */
export async function hangingServer() {
  const { createServer } = await import("node:http");
  return listening(createServer(() => {}));
}

/**
 * `server` (a `node:http` server) listening on a free port of 127.0.0.1; resolves to `{ url, close() }`, where
 * `close()` drops the open connections too.
 */
export async function listening(server) {
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** A port on 127.0.0.1 that was free a moment ago (for a program that takes its port as an argument). */
export async function freePort() {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The middle value of `xs` once sorted (of an even count, the upper of the two middle ones), as the benches report it. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** `n` bytes in KiB, one decimal: `12.3 KiB`. */
export const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

/** Every file below `dir`, its subfolders' included. */
export function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const f = join(dir, name);
    if (statSync(f).isDirectory()) out.push(...filesUnder(f));
    else out.push(f);
  }
  return out;
}
