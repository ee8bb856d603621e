// esbuild bundles of the suite for runtimes that cannot resolve node_modules themselves (workerd, edge-runtime).
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Bundles `entry` resolving "docauto" through `conditions`; returns { code, inputs } (inputs: bundled files). */
export async function bundle(entry, { conditions, format, external = [], plugins = [] }) {
  const res = await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    bundle: true,
    write: false,
    format,
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions,
    external,
    plugins,
    metafile: true,
    logLevel: "warning",
    // The web glue mentions import.meta.url only in the async default init, which the IIFE (edge) entry never calls.
    // wasm-bindgen repeats a snippet module key in its import object (same module, harmless): silence that too.
    logOverride: { "empty-import-meta": "silent", "duplicate-object-key": "silent" },
    target: "es2022",
  });
  return { code: res.outputFiles[0].text, inputs: Object.keys(res.metafile.inputs) };
}

/**
 * A Worker as wrangler deploys it: `entry` bundled under the workerd conditions into `dir/worker.mjs`, each entry's
 * `import "./wasm/<module>.wasm"` kept (external) and every module of the package copied into `dir/wasm/` by its name,
 * for miniflare's `CompiledWasm` rule. Returns the bundled files.
 */
export async function writeWorker(entry, dir) {
  const { code, inputs } = await bundle(entry, { conditions: ["workerd", "worker", "browser"], format: "esm", external: ["*.wasm"] });
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir + "wasm", { recursive: true });
  writeFileSync(dir + "worker.mjs", code);
  const pkg = fileURLToPath(new URL("../../pkg/", import.meta.url));
  for (const module of readdirSync(pkg, { recursive: true }).filter((f) => f.endsWith(".wasm"))) {
    copyFileSync(pkg + module, dir + "wasm/" + module.split("/").pop());
  }
  return inputs;
}

// What Vercel's bundler does with a `.wasm?module` import: the default export is a WebAssembly.Module compiled in the
// function's own realm (here: the bytes travel in the bundle and are compiled inside the runtime's VM).
export const wasmModuleImports = {
  name: "wasm-module",
  setup(build) {
    build.onResolve({ filter: /\.wasm\?module$/ }, (args) => ({
      path: new URL(args.path.replace(/\?module$/, ""), `file://${args.resolveDir}/`).pathname,
      namespace: "wasm-module",
    }));
    build.onLoad({ filter: /.*/, namespace: "wasm-module" }, (args) => ({
      contents: `const b = atob(${JSON.stringify(readFileSync(args.path).toString("base64"))});
const bytes = new Uint8Array(b.length);
for (let i = 0; i < b.length; i++) bytes[i] = b.charCodeAt(i);
export default new WebAssembly.Module(bytes);`,
      loader: "js",
    }));
  },
};
