// workerd (Cloudflare Workers) through miniflare: the suite runs inside a Worker that imports the root entry and
// `docauto/webhooks` through the "workerd" condition; each .wasm is a CompiledWasm module, as wrangler provides it.
import { fileURLToPath } from "node:url";
import { writeWorker } from "./bundle.mjs";
import { runSuiteWorker } from "./workerd-suite.mjs";
import { report, resolvedCheck } from "./common.mjs";

const dir = fileURLToPath(new URL("../../target/docauto-js/workerd/", import.meta.url));
// The bundle keeps each entry's `import "./wasm/<module>.wasm"` (external): one folder holds them all, by their names.
const inputs = await writeWorker("./worker-entry.mjs", dir);
// An entry's own file (not its glue under wasm/, nor a module it imports beside it, such as webhooks/stores.js).
const entries = inputs.filter((i) => i.startsWith("pkg/") && !i.includes("/wasm/") && !i.endsWith("/stores.js"));
report("workerd resolution", resolvedCheck("/" + (entries.find((i) => !i.includes("webhooks/")) ?? "none"), "workerd.js"));
report("workerd resolution (webhooks)", resolvedCheck("/" + (entries.find((i) => i.includes("webhooks/")) ?? "none"), "webhooks/workerd.js"));

await runSuiteWorker(dir + "worker.mjs", "workerd");
