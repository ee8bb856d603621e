// esbuild bundles of the suite for runtimes that cannot resolve node_modules themselves (workerd, edge-runtime).
import { build } from "esbuild";
import { readFileSync } from "node:fs";
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
