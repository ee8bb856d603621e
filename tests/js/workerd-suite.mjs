// Runs a bundled suite Worker in workerd through miniflare (the .wasm files as CompiledWasm modules, as wrangler
// provides them) and reports the `{ lines, passed, failed }` it answers to `url` under `suite`. Node only (imports miniflare).
import { Miniflare } from "miniflare";
import { report } from "./common.mjs";

export async function runSuiteWorker(scriptPath, suite, url = "http://localhost/") {
  const mf = new Miniflare({
    modules: true,
    scriptPath,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-09-01",
  });
  try {
    const res = await mf.dispatchFetch(url);
    const text = await res.text();
    let out;
    try {
      out = JSON.parse(text);
    } catch {
      console.log(`FAIL worker answered ${res.status}: ${text.slice(0, 500)}`);
      out = { lines: [], passed: 0, failed: 1 };
    }
    for (const l of out.lines) console.log(l);
    report(suite, out);
  } finally {
    await mf.dispose();
  }
}
