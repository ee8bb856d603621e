// docauto/emulator in Node, Deno and Bun (run.mjs in each, importing the package through its own condition), then
// the check that each process ended by itself within 5 s of its last line: close() left no timer, socket or
// delivery to keep it alive (run.mjs never calls process.exit).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { onlyRuntimes, report } from "../common.mjs";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const bin = (b) => `${root}node_modules/.bin/${b}`;
const script = "tests/js/emulator/run.mjs";
const all = [
  ["node", process.execPath, [script]],
  ["deno", bin("deno"), ["run", "--allow-read", "--allow-net", "--allow-env", script]],
  ["bun", bin("bun"), [script]],
];
const only = onlyRuntimes(all.map(([name]) => name));
const runtimes = all.filter(([name]) => only.includes(name));

for (const [name, cmd, args] of runtimes) {
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" } });
  let out = "";
  let resultAt;
  child.stdout.on("data", (d) => {
    out += d;
    if (!resultAt && out.includes("RESULT ")) resultAt = Date.now();
  });
  child.stderr.on("data", (d) => process.stderr.write(d));
  const overall = setTimeout(() => child.kill("SIGKILL"), 120_000);
  let lingering;
  const watch = setInterval(() => {
    if (resultAt && Date.now() - resultAt > 5_000 && child.exitCode === null) {
      lingering = true;
      child.kill("SIGKILL");
    }
  }, 100);
  const code = await new Promise((resolve) => child.on("close", (c) => resolve(c)));
  clearTimeout(overall);
  clearInterval(watch);
  process.stdout.write(out);
  const ok = Boolean(resultAt) && !lingering && code === 0;
  console.log(
    `${ok ? "ok  " : "FAIL"} ${name}: the process ended by itself after close() (${
      lingering ? "still running 5 s after its last line" : `exit code ${code}`
    })`,
  );
  report(`docauto/emulator: ${name} exits after close()`, { passed: ok ? 1 : 0, failed: ok ? 0 : 1 });
}
