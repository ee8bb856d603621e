// One cold start of a Worker in workerd, as the benches time it. `workerdOnce`: miniflare started on `script` (an ES
// module; each `.wasm` it imports a CompiledWasm module, found under `modulesRoot` when given), its first request
// answered and checked against `expected`, then disposed. `workerdServeOnce`: the same Worker in `workerd serve`
// alone, as Cloudflare runs it, without miniflare's Node process and loopback proxy in between.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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

/**
 * One cold start of a Worker in workerd itself, without miniflare: `workerd serve` on a config naming `script` (an
 * ES module in `dir`) and the `.wasm` modules it imports (paths relative to `dir`), its socket on a port of the
 * kernel's choosing (reported on `--control-fd`, as miniflare learns it), one request, then the process killed.
 * Resolves `{ wall, cpu }`: the ms from the spawn to the checked answer, and the CPU ms of every thread of the
 * workerd process up to then (the scheduler's nanosecond counters), which miniflare's own process and its loopback
 * proxy leave out.
 */
export async function workerdServeOnce(dir, script, wasm, expected) {
  const config = join(dir, `${script}.capnp`);
  const modules = [
    `(name = "${script}", esModule = embed "${script}")`,
    ...wasm.map((w) => `(name = "${w}", wasm = embed "${w}")`),
  ];
  writeFileSync(config, `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ ${modules.join(", ")} ],
  compatibilityDate = "2025-09-01",
);
`);
  const t0 = performance.now();
  const child = spawn(workerdBin, ["serve", config, "--control-fd=3"], {
    cwd: dir, stdio: ["ignore", "ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise((_, reject) => child.on("exit", (code) => reject(new Error(`workerd exited ${code}: ${err.slice(0, 600)}`))));
  exited.catch(() => {});
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    const port = await Promise.race([listening(child.stdio[3]), exited]);
    const text = await Promise.race([answer(port), exited]);
    const wall = performance.now() - t0;
    const cpu = cpuOf([child.pid]);
    if (text !== expected) throw new Error(`worker ${script} answered ${JSON.stringify(text.slice(0, 300))}`);
    return { wall, cpu };
  } finally {
    clearTimeout(timer);
    child.kill("SIGKILL");
    await new Promise((done) => (child.exitCode !== null || child.signalCode !== null ? done() : child.once("exit", done)));
  }
}

const workerdBin = fileURLToPath(new URL("../../node_modules/.bin/workerd", import.meta.url));

/** The port of workerd's `http` socket, from its control messages (one JSON object per line). */
function listening(control) {
  return new Promise((resolvePort, reject) => {
    let buffered = "";
    control.on("data", (d) => {
      buffered += d;
      for (const line of buffered.split("\n").slice(0, -1)) {
        const message = JSON.parse(line);
        if (message.event === "listen" && message.socket === "http") resolvePort(message.port);
      }
      buffered = buffered.slice(buffered.lastIndexOf("\n") + 1);
    });
    control.on("error", reject);
  });
}

/** The body of a GET / on `port` (a fresh connection, closed after the answer). */
function answer(port) {
  return new Promise((resolveText, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => (res.statusCode === 200 ? resolveText(body) : reject(new Error(`status ${res.statusCode}: ${body.slice(0, 300)}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

/** CPU ms (all threads, from the scheduler's nanosecond counters) that the processes `pids` have run so far. */
export function cpuOf(pids) {
  let ns = 0;
  for (const pid of pids) {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    }
  }
  return ns / 1e6;
}
