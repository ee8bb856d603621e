// workerd (Cloudflare Workers) through miniflare: the TestSigner suite inside a Worker, as a handler's tests run under
// workerd. Two entries bring two .wasm files of one name, so each stays an external import at its own path and is
// provided as a CompiledWasm module, as wrangler does.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { report } from "./common.mjs";
import { runSuiteWorker } from "./workerd-suite.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = root + "target/docauto-js/testing-workerd/";
const wasms = new Set();
const res = await build({
  entryPoints: [root + "tests/js/testing-worker-entry.mjs"],
  bundle: true,
  write: false,
  format: "esm",
  platform: "neutral",
  mainFields: ["module", "main"],
  conditions: ["workerd", "worker", "browser"],
  metafile: true,
  logLevel: "warning",
  logOverride: { "empty-import-meta": "silent", "duplicate-object-key": "silent" },
  target: "es2022",
  plugins: [{
    name: "wasm-per-entry",
    setup(b) {
      // "./wasm/docauto-testing.wasm" of pkg/testing/workerd.js becomes "./testing/wasm/docauto-testing.wasm", and so on.
      b.onResolve({ filter: /\.wasm$/ }, (args) => {
        const file = relative(root + "pkg", `${args.resolveDir}/${args.path}`);
        wasms.add(file);
        return { path: `./${file}`, external: true };
      });
    },
  }],
});
const inputs = Object.keys(res.metafile.inputs);
const entry = (name) =>
  inputs.find((i) => i.startsWith(`pkg/${name}/`) && !i.includes("/wasm/") && !i.endsWith("/stores.js")) ?? "none";
const resolution = ["testing", "webhooks"].map((name) => {
  const ok = entry(name) === `pkg/${name}/workerd.js`;
  console.log(`${ok ? "ok  " : "FAIL"} "docauto/${name}" resolves to ${name}/workerd.js (got ${entry(name)})`);
  return ok;
});
report("workerd docauto/testing resolution", { passed: resolution.filter(Boolean).length, failed: resolution.filter((ok) => !ok).length });
mkdirSync(dir, { recursive: true });
writeFileSync(dir + "worker.mjs", res.outputFiles[0].text);
for (const file of wasms) {
  mkdirSync(dirname(dir + file), { recursive: true });
  copyFileSync(root + "pkg/" + file, dir + file);
}

await runSuiteWorker(dir + "worker.mjs", "workerd docauto/testing");
