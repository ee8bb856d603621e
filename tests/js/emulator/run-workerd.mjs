// docauto/emulator in workerd through miniflare: worker.mjs bundled with the "workerd" condition, the .wasm files
// beside it as CompiledWasm modules (as wrangler provides them); the webhook receiver runs here, in Node.
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bundle } from "../bundle.mjs";
import { report, resolvedCheck } from "../common.mjs";
import { startReceiver } from "./receiver.mjs";
import { runSuiteWorker } from "../workerd-suite.mjs";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const dir = `${root}target/docauto-js/emulator-workerd/`;
const { code, inputs } = await bundle("./emulator/worker.mjs", {
  conditions: ["workerd", "worker", "browser"],
  format: "esm",
  external: ["*.wasm"],
});
report("docauto/emulator workerd resolution", resolvedCheck("/" + (inputs.find((i) => i.startsWith("pkg/emulator/") && !i.includes("/wasm/") && !/\/(core|socket)\.js$/.test(i)) ?? "none"), "emulator/workerd.js"));
mkdirSync(`${dir}wasm`, { recursive: true });
writeFileSync(`${dir}worker.mjs`, code);
for (const module of ["emulator/wasm/docauto-emulator.wasm", "wasm/docauto-client.wasm", "webhooks/wasm/docauto-webhooks.wasm", "webhooks/wasm/docauto-webhooks-p256.wasm", "realtime/wasm/docauto-realtime.wasm"]) {
  copyFileSync(`${root}pkg/${module}`, `${dir}wasm/${module.split("/").pop()}`);
}

const receiver = await startReceiver();
try {
  await runSuiteWorker(`${dir}worker.mjs`, "docauto/emulator in workerd", `http://localhost/?receiver=${encodeURIComponent(receiver.base)}`);
} finally {
  await receiver.close();
}
