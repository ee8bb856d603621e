// One cold start of a Worker in workerd (miniflare), as the benches time it: miniflare started on `script` (an ES
// module; each `.wasm` it imports a CompiledWasm module, found under `modulesRoot` when given), its first request
// answered and checked against `expected`, then disposed.
import { Miniflare } from "miniflare";

/**
 * Resolves `{ ms, measured }`: the ms from the start to the checked answer, and what `whileUp()` returned, called
 * once the answer arrived and before workerd is stopped (for figures only its live process gives, such as its CPU).
 */
export async function workerdOnce(script, expected, { modulesRoot, whileUp } = {}) {
  const t0 = performance.now();
  const mf = new Miniflare({
    modules: true,
    scriptPath: script,
    ...(modulesRoot ? { modulesRoot } : {}),
    compatibilityDate: "2025-09-01",
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
  });
  try {
    const res = await mf.dispatchFetch("http://localhost/");
    const text = await res.text();
    const ms = performance.now() - t0;
    const measured = whileUp?.();
    if (res.status !== 200 || text !== expected) throw new Error(`worker ${script} answered ${res.status}: ${text.slice(0, 300)}`);
    return { ms, measured };
  } finally {
    await mf.dispose();
  }
}
