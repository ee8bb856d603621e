// docauto/emulator in workerd through miniflare: worker.mjs bundled with the "workerd" condition, the .wasm files
// beside it as CompiledWasm modules (as wrangler provides them); the webhook receiver runs here, in Node.
import { fileURLToPath } from "node:url";
import { writeWorker } from "../bundle.mjs";
import { report, resolvedCheck } from "../common.mjs";
import { startReceiver } from "./receiver.mjs";
import { runSuiteWorker } from "../workerd-suite.mjs";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const dir = `${root}target/docauto-js/emulator-workerd/`;
const inputs = await writeWorker("./emulator/worker.mjs", dir);
report("docauto/emulator workerd resolution", resolvedCheck("/" + (inputs.find((i) => i.startsWith("pkg/emulator/") && !i.includes("/wasm/") && !/\/(core|socket)\.js$/.test(i)) ?? "none"), "emulator/workerd.js"));

const receiver = await startReceiver();
try {
  await runSuiteWorker(`${dir}worker.mjs`, "docauto/emulator in workerd", `http://localhost/?receiver=${encodeURIComponent(receiver.base)}`);
} finally {
  await receiver.close();
}
