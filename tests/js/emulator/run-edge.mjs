// docauto/emulator in Vercel's edge runtime (edge-runtime / @edge-runtime/vm): edge-entry.mjs bundled with the
// "edge-light" condition, its three .wasm files as `?module` imports (as Vercel's bundler provides them), evaluated
// inside the runtime's VM context; the webhook receiver runs here, in Node.
import { EdgeRuntime } from "edge-runtime";
import { bundle, wasmModuleImports } from "../bundle.mjs";
import { report, resolvedCheck } from "../common.mjs";
import { startReceiver } from "./receiver.mjs";

const { code, inputs } = await bundle("./emulator/edge-entry.mjs", {
  conditions: ["edge-light", "worker", "browser"],
  format: "iife",
  plugins: [wasmModuleImports],
});
const entry = inputs.find((i) => i.startsWith("pkg/emulator/") && !i.includes("/wasm/") && !/\/(core|socket)\.js$/.test(i));
report("docauto/emulator edge-runtime resolution", resolvedCheck("/" + (entry ?? "none"), "emulator/edge-light.js"));

const receiver = await startReceiver();
let out;
try {
  const runtime = new EdgeRuntime({ initialCode: code });
  out = JSON.parse(await runtime.evaluate(`__docautoEmulatorSuite(${JSON.stringify(receiver.base)})`));
} catch (e) {
  console.log(`FAIL docauto/emulator in the edge runtime: ${e && e.message}`);
  out = { lines: [], passed: 0, failed: 1 };
} finally {
  await receiver.close();
}
for (const line of out.lines) console.log(line);
report("docauto/emulator: edge-runtime", out);
