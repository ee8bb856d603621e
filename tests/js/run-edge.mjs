// Vercel's edge runtime (edge-runtime / @edge-runtime/vm): the suite bundled with the "edge-light" condition and
// evaluated inside the runtime's VM context.
import { EdgeRuntime } from "edge-runtime";
import { bundle, wasmModuleImports } from "./bundle.mjs";
import { report, resolvedCheck } from "./common.mjs";

const { code, inputs } = await bundle("./edge-entry.mjs", {
  conditions: ["edge-light", "worker", "browser"],
  format: "iife",
  plugins: [wasmModuleImports],
});
// An entry's own file (not its glue under wasm/, nor a module it imports beside it, such as webhooks/stores.js).
const entries = inputs.filter((i) => i.startsWith("pkg/") && !i.includes("/wasm/") && !i.endsWith("/stores.js"));
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
