// workerd (Cloudflare Workers) through miniflare: the suite runs inside a Worker that imports the root entry and
// `docauto/webhooks` through the "workerd" condition; each .wasm is a CompiledWasm module, as wrangler provides it.
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
// An entry's own file (not its glue under wasm/, nor a module it imports beside it, such as webhooks/stores.js).
const entries = inputs.filter((i) => i.startsWith("pkg/") && !i.includes("/wasm/") && !i.endsWith("/stores.js"));
report("workerd resolution", resolvedCheck("/" + (entries.find((i) => !i.includes("webhooks/")) ?? "none"), "workerd.js"));
report("workerd resolution (webhooks)", resolvedCheck("/" + (entries.find((i) => i.includes("webhooks/")) ?? "none"), "webhooks/workerd.js"));
mkdirSync(dir + "wasm", { recursive: true });
writeFileSync(dir + "worker.mjs", code);
// The bundle keeps each entry's `import "./wasm/<module>.wasm"` (external): one folder holds both, by their names.
for (const module of ["wasm/docauto-client.wasm", "webhooks/wasm/docauto-webhooks.wasm", "webhooks/wasm/docauto-webhooks-p256.wasm"]) {
  copyFileSync(fileURLToPath(new URL(`../../pkg/${module}`, import.meta.url)), dir + "wasm/" + module.split("/").pop());
}

await runSuiteWorker(dir + "worker.mjs", "workerd");
