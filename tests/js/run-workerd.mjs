// workerd (Cloudflare Workers) through miniflare: the suite runs inside a Worker that imports "docauto" through the
// "workerd" condition; the .wasm is a CompiledWasm module, as wrangler provides it.
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bundle } from "./bundle.mjs";
import { runSuiteWorker } from "./workerd-suite.mjs";
import { report, resolvedCheck } from "./common.mjs";

const dir = fileURLToPath(new URL("../../target/docauto-js/workerd/", import.meta.url));
const { code, inputs } = await bundle("./worker-entry.mjs", {
  conditions: ["workerd", "worker", "browser"],
  format: "esm",
  external: ["*.wasm"],
});
report("workerd resolution", resolvedCheck("/" + (inputs.find((i) => i.startsWith("pkg/") && !i.includes("/wasm/")) ?? "none"), "workerd.js"));
mkdirSync(dir + "wasm", { recursive: true });
writeFileSync(dir + "worker.mjs", code);
copyFileSync(fileURLToPath(new URL("../../pkg/wasm/docauto_bg.wasm", import.meta.url)), dir + "wasm/docauto_bg.wasm");

await runSuiteWorker(dir + "worker.mjs", "workerd");
