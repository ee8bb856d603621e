// Helpers shared by the runners that live in Node-compatible runtimes (Node, Deno, Bun).
import { readFileSync } from "node:fs";

export const FIXTURES_URL = new URL("../../target/docauto-js/fixtures.json", import.meta.url);

export function loadFixtures() {
  return JSON.parse(readFileSync(FIXTURES_URL, "utf8"));
}

/** Prints the machine-readable count line that cargo xtask test sums. */
export function report(suite, r) {
  console.log(`RESULT ${JSON.stringify({ suite, passed: r.passed, failed: r.failed })}`);
}

/** Checks that the bare specifier resolved through the expected `exports` condition. */
export function resolvedCheck(resolved, file) {
  const ok = resolved.endsWith(`/pkg/${file}`);
  console.log(`${ok ? "ok  " : "FAIL"} "docauto" resolves to ${file} (got ${resolved})`);
  return { passed: ok ? 1 : 0, failed: ok ? 0 : 1 };
}
