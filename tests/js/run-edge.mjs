// Vercel's edge runtime (edge-runtime / @edge-runtime/vm): the suite bundled with the "edge-light" condition and
// evaluated inside the runtime's VM context.
import { EdgeRuntime } from "edge-runtime";
import { readFileSync } from "node:fs";
import { bundle } from "./bundle.mjs";
import { report, resolvedCheck } from "./common.mjs";

// What Vercel's bundler does with a `.wasm?module` import: the default export is a WebAssembly.Module compiled in the
// function's own realm (here: the bytes travel in the bundle and are compiled inside the runtime's VM).
const wasmModuleImports = {
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

const { code, inputs } = await bundle("./edge-entry.mjs", {
  conditions: ["edge-light", "worker", "browser"],
  format: "iife",
  plugins: [wasmModuleImports],
});
const entries = inputs.filter((i) => i.startsWith("pkg/") && !i.includes("/wasm/"));
report("edge resolution", resolvedCheck("/" + (entries.find((i) => !i.includes("webhooks/")) ?? "none"), "edge-light.js"));
report("edge resolution (webhooks)", resolvedCheck("/" + (entries.find((i) => i.includes("webhooks/")) ?? "none"), "webhooks/edge-light.js"));
const runtime = new EdgeRuntime({ initialCode: code });
let out;
try {
  out = JSON.parse(await runtime.evaluate("__docautoSuite()"));
} catch (e) {
  console.log(`FAIL edge runtime: ${e && e.message}`);
  out = { lines: [], passed: 0, failed: 1 };
}
for (const l of out.lines) console.log(l);
report("edge-runtime", out);
