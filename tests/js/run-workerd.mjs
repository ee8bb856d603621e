// workerd (Cloudflare Workers) through miniflare: the suite runs inside a Worker that imports "docauto" through the
// "workerd" condition; the .wasm is a CompiledWasm module, as wrangler provides it.
import { Miniflare } from "miniflare";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bundle } from "./bundle.mjs";
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

const mf = new Miniflare({
  modules: true,
  scriptPath: dir + "worker.mjs",
  modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
  compatibilityDate: "2025-09-01",
});
try {
  const res = await mf.dispatchFetch("http://localhost/");
  const text = await res.text();
  let out;
  try {
    out = JSON.parse(text);
  } catch {
    console.log(`FAIL worker answered ${res.status}: ${text.slice(0, 500)}`);
    out = { lines: [], passed: 0, failed: 1 };
  }
  for (const l of out.lines) console.log(l);
  report("workerd", out);
} finally {
  await mf.dispose();
}
