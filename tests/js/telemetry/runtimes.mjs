// The package's OpenTelemetry spans and metrics with the real OpenTelemetry JS SDK (in-memory exporters) in Node,
// Deno, Bun and workerd (miniflare): each runs checks.mjs against one scripted server started here.
//
// Run: `node tests/js/telemetry/runtimes.mjs [--only node,deno,bun,workerd]` (pkg/ built).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { onlyRuntimes, report } from "../common.mjs";
import { startScriptedServer } from "./server.mjs";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const bin = (b) => join(ROOT, "node_modules", ".bin", b);
const script = join(ROOT, "tests", "js", "telemetry", "run.mjs");
const only = onlyRuntimes(["node", "deno", "bun", "workerd"]);

function child(cmd, args) {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: ROOT, timeout: 120_000, env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" } }, (e, out, err) => {
      const lines = out.trim().split("\n");
      let result;
      try {
        result = JSON.parse(lines.at(-1));
        lines.pop();
      } catch {
        result = { passed: 0, failed: 1 };
        lines.push(`FAIL the process ended without its result${e ? `: ${e.message}` : ""}\n${err}`);
      }
      resolve({ lines, ...result });
    });
  });
}

/**
 * worker.mjs bundled as wrangler bundles a Worker (conditions workerd, worker, browser; the `browser` field of a
 * package.json first, which the SDK's packages use for their non-Node files), every .wasm of the package beside it.
 */
async function writeTelemetryWorker(dir) {
  const { build } = await import("esbuild");
  const { copyFileSync, mkdirSync, readdirSync, rmSync } = await import("node:fs");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir + "wasm", { recursive: true });
  await build({
    entryPoints: [join(ROOT, "tests", "js", "telemetry", "worker.mjs")],
    bundle: true,
    format: "esm",
    platform: "browser",
    mainFields: ["browser", "module", "main"],
    conditions: ["workerd", "worker", "browser"],
    external: ["*.wasm"],
    outfile: dir + "worker.mjs",
    logLevel: "error",
    logOverride: { "empty-import-meta": "silent", "duplicate-object-key": "silent" },
    target: "es2022",
  });
  const pkg = join(ROOT, "pkg") + "/";
  for (const module of readdirSync(pkg, { recursive: true }).filter((f) => f.endsWith(".wasm"))) {
    copyFileSync(pkg + module, dir + "wasm/" + module.split("/").pop());
  }
}

async function inWorkerd(base) {
  const { Miniflare } = await import("miniflare");
  const dir = join(ROOT, "target", "docauto-js", "telemetry-worker") + "/";
  await writeTelemetryWorker(dir);
  const mf = new Miniflare({ modules: true, scriptPath: dir + "worker.mjs", modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }], compatibilityDate: "2025-09-01" });
  try {
    const res = await mf.dispatchFetch(`http://localhost/?base=${encodeURIComponent(base)}`);
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      return { lines: [`FAIL the Worker answered ${res.status}: ${text.slice(0, 2000)}`], passed: 0, failed: 1 };
    }
  } finally {
    await mf.dispose();
  }
}

let failed = 0;
if (only.includes("node")) {
  // The package never imports @opentelemetry/api: a Worker or a page bundle without it must still build.
  const { readFileSync, readdirSync } = await import("node:fs");
  const { importsOf, withoutComments } = await import("../common.mjs");
  const pkg = join(ROOT, "pkg") + "/";
  const importing = readdirSync(pkg, { recursive: true })
    .filter((f) => /\.(m|c)?js$/.test(f))
    .filter((f) => importsOf(withoutComments(readFileSync(pkg + f, "utf8"))).some((s) => s.startsWith("@opentelemetry/")));
  const ok = importing.length === 0;
  console.log(`${ok ? "ok  " : "FAIL"} no file of the package imports @opentelemetry/*${ok ? "" : `: ${importing.join(", ")}`}`);
  report("telemetry: the package imports no @opentelemetry package", { passed: ok ? 1 : 0, failed: ok ? 0 : 1 });
  failed += ok ? 0 : 1;
}
const server = await startScriptedServer();
try {
  for (const name of only) {
    const base = `${server.url}/${name}`;
    const started = Date.now();
    const result =
      name === "node"
        ? await child(process.execPath, [script, base])
        : name === "deno"
          ? await child(bin("deno"), ["run", "-A", script, base])
          : name === "bun"
            ? await child(bin("bun"), [script, base])
            : await inWorkerd(base);
    for (const line of result.lines) console.log(`${name}: ${line}`);
    console.log(`(${name}: ${Date.now() - started} ms)`);
    report(`telemetry (${name}${name === "node" ? ` ${process.version}` : ""})`, result);
    failed += result.failed;
  }
} finally {
  await server.close();
}
process.exitCode = failed === 0 ? 0 : 1;
