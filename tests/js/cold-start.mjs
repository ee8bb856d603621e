// cargo xtask bench: cold start of `docauto/webhooks` against jose, as users deploy them. The package is packed
// (`npm pack pkg/`) and installed from its tarball into a fresh app, with jose beside it; then, in interleaved rounds:
// - workerd (miniflare): each side is a Worker bundled by esbuild (`--conditions=workerd,worker,browser`), the `.wasm`
//   a `CompiledWasm` module; one start is `new Miniflare` to the first answer of its first request;
// - workerd (`workerd serve`): the same Workers in workerd alone, without miniflare's Node process and loopback proxy
//   (a config naming the script and its `.wasm` modules); one start is the spawn to the first answer;
// - Deno, Bun and Node: each side is a fresh process that imports, verifies one delivery, prints and exits; one start
//   is the spawn to its printed answer.
// Every side's time is taken minus a bare Worker or script (which only answers) started in the same round: that
// difference is what the verifier costs a cold start. jose does the same checks as the package's `verify`:
// `jwtVerify` with a local key set, issuer and clock, the body's SHA-256 against `bodySha256`, and the envelope's
// `eventId`, `type` and `processingId` against the claims. A third side does them with the platform alone (WebCrypto,
// `atob`, `JSON.parse`; no library): the floor of any verifier, so each library's cost over it shows what a library
// can still win. Our side is also split, by starting intermediate
// variants in the same round: the module compiled alone (compile), the entry imported without verifying (import +
// instantiation), a verifier made and nothing verified (constructor), the whole (first `verify`); and the first
// delivery through `verifySync` instead.
//
//   node tests/js/cold-start.mjs [--rounds N] [--runtimes workerd,workerd-serve,deno,bun,node] [--pkg DIR] [--baseline DIR]
//
// `--baseline DIR` packs a second build (a pkg/ folder of another commit) and starts it in the same rounds, for a
// before/after comparison from one run. Prints a `BENCH {...}` line (per runtime: the bare start, each side's cost
// over it and our ratio to jose), then a markdown report between `<!-- table -->` and `<!-- /table -->`. The targets
// are `cargo xtask bench`'s (xtask/src/cold_start.rs), which writes their verdicts into PERFORMANCE.md.
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { TestSigner } from "docauto/testing";
import { bundle } from "./bundle.mjs";
import { importsOf, withoutComments } from "./common.mjs";
import { cpuOf, workerdOnce, workerdServeOnce } from "./workerd-once.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const work = join(root, "target/docauto-js/cold-start");
const bin = (b) => join(root, "node_modules/.bin", b);
const NOW = 1_790_000_000;
const EXPECTED = "agr_cold_start";

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const ROUNDS = Number(flag("--rounds", "11"));
const RUNTIMES = flag("--runtimes", "workerd,workerd-serve,deno,bun,node").split(",");
const PKG = resolve(flag("--pkg", join(root, "pkg")));
const BASELINE = flag("--baseline", null);
const LABELS = { workerd: "workerd (miniflare)", "workerd-serve": "workerd (`workerd serve`)", deno: "Deno", bun: "Bun", node: "Node" };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const quartiles = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.round(q * (s.length - 1)))];
  return [at(0.25), at(0.75)];
};

// ---------------------------------------------------------------------------------------------------------------
// The apps: the package installed from its tarball, jose beside it.

function installApp(name, pkgDir) {
  const dir = join(work, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const packed = execFileSync("npm", ["pack", pkgDir, "--pack-destination", dir, "--json"], {
    cwd: dir, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000,
  });
  const tarball = join(dir, JSON.parse(packed.toString())[0].filename);
  const jose = JSON.parse(readFileSync(join(root, "node_modules/jose/package.json"), "utf8")).version;
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `cold-${name}`, private: true, type: "module" }));
  execFileSync("npm", ["install", tarball, `jose@${jose}`, "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd: dir, stdio: ["ignore", "pipe", "pipe"], timeout: 300_000,
  });
  return dir;
}

/** The module `docauto/webhooks` loads, and the JS files of its entry (its graph as the Node entry imports it). */
function moduleOf(app) {
  const wasmDir = join(app, "node_modules/docauto/webhooks/wasm");
  const wasm = readdirSync(wasmDir).filter((f) => f.endsWith(".wasm")).map((f) => join(wasmDir, f));
  return wasm;
}

// ---------------------------------------------------------------------------------------------------------------
// The scripts of one side. `input`: { jwks, body, signature }.

function verifierScripts(input, runtime) {
  const { jwks, body, signature } = input;
  const literal = JSON.stringify;
  const digestWeb = `const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)));
const sha = base64url.encode(digest);`;
  const digestNode = `const { createHash } = await import("node:crypto");
const sha = createHash("sha256").update(body).digest("base64url");`;
  // Ours: the package's verifier made from the static key set (every script of our side but `imported`).
  const ours = `import { WebhookVerifier } from "docauto/webhooks";
const v = new WebhookVerifier({ jwks: ${literal(jwks)}, now: ${NOW} });`;
  // The rest of a delivery's checks once the token's payload is trusted, the same for jose and the floor: the body's
  // SHA-256 (WebCrypto where it is the platform's, in workerd and Deno; node:crypto in Node and Bun, the faster of
  // the two there, as the steady-state table measures jose) against `bodySha256`, the envelope against the claims.
  const bodyChecks = `${runtime === "node" || runtime === "bun" ? digestNode : digestWeb}
if (sha !== payload.bodySha256) throw new Error("body");
const e = JSON.parse(body);
if (e.eventId !== payload.eventId || e.type !== payload.type || e.processingId !== payload.processingId) throw new Error("claims");
ANSWER(e.processingId);`;
  return {
    verify: `${ours}
const e = await v.verify(${literal(body)}, ${literal(signature)});
ANSWER(e.processingId);`,
    imported: `import { WebhookVerifier } from "docauto/webhooks";
globalThis.__verifier = WebhookVerifier;
ANSWER(${literal(EXPECTED)});`,
    constructed: `${ours}
globalThis.__verifier = v;
ANSWER(${literal(EXPECTED)});`,
    // The same first delivery through `verifySync`: p256 in wasm where the host's crypto is asynchronous (workerd,
    // Deno, Bun), so its first call instantiates the P-256 module and compiles its arithmetic.
    verifySync: `${ours}
const e = v.verifySync(${literal(body)}, ${literal(signature)});
ANSWER(e.processingId);`,
    jose: `import { base64url, createLocalJWKSet, jwtVerify } from "jose";
const body = ${literal(body)};
const { payload } = await jwtVerify(${literal(signature)}, createLocalJWKSet(${literal(jwks)}), {
  algorithms: ["ES256"], issuer: "svc-process", currentDate: new Date(${NOW * 1000}),
});
${bodyChecks}`,
    // The floor of any verifier: the same checks with the platform alone and no library (the token cut by hand,
    // `atob`, `JSON.parse`, WebCrypto's key import and ECDSA check, the body's SHA-256 as jose's side takes it). What
    // jose or we cost over this is what the library costs a cold start.
    platform: `const body = ${literal(body)};
const token = ${literal(signature)};
const jwks = ${literal(jwks)};
const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
const base64url = { encode: (b) => btoa(String.fromCharCode(...b)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "") };
const [h, p, s] = token.split(".");
const header = JSON.parse(new TextDecoder().decode(bytes(h)));
const jwk = jwks.keys.find((k) => k.kid === header.kid);
if (header.alg !== "ES256" || !jwk) throw new Error("header");
const key = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
const signed = new TextEncoder().encode(h + "." + p);
if (!(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, bytes(s), signed))) throw new Error("signature");
const payload = JSON.parse(new TextDecoder().decode(bytes(p)));
if (payload.iss !== "svc-process" || !(payload.exp > ${NOW}) || !(payload.iat <= ${NOW} + 60)) throw new Error("claims");
${bodyChecks}`,
  };
}

/** A fresh-process script: `ANSWER(x)` prints x. */
function processScript(source) {
  return source.replace(/ANSWER\((.*)\);$/m, "console.log($1);");
}

/** The compile-only script of a runtime: the module's bytes read and compiled as its package entry does. */
function compileScript(runtime, wasmPaths) {
  const read = runtime === "deno"
    ? (p) => `Deno.readFileSync(${JSON.stringify(p)})`
    : (p) => `readFileSync(${JSON.stringify(p)})`;
  return `${runtime === "deno" ? "" : 'import { readFileSync } from "node:fs";\n'}${wasmPaths
    .map((p) => `new WebAssembly.Module(${read(p)});`)
    .join("\n")}
console.log(${JSON.stringify(EXPECTED)});`;
}

/** A Worker answering `ANSWER(x)` on its first request; the top-level of `source` runs at start. */
function workerScript(source) {
  const [top, ...rest] = source.split("\n");
  const imports = [top, ...rest].filter((l) => l.startsWith("import ")).join("\n");
  const code = [top, ...rest].filter((l) => !l.startsWith("import ")).join("\n");
  return `${imports}
export default { async fetch() {
${code.replace(/ANSWER\((.*)\);$/m, "return new Response($1);")}
} };`;
}

async function bundleWorker(dir, name, source, app) {
  const entry = join(app, `${name}.entry.mjs`);
  writeFileSync(entry, source);
  const { code } = await bundle(entry, { conditions: ["workerd", "worker", "browser"], format: "esm", external: ["*.wasm"] });
  const out = join(dir, `${name}.mjs`);
  writeFileSync(out, code);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// One start.

/**
 * Spawns `cmd` (under bash, whose `times` reports the CPU time of its children) and resolves { wall, cpu }: the ms
 * from spawn to its first printed line (which must be the expected answer), and the CPU ms (user + system, all
 * threads) of the process. Bash's own start is in every side's wall time alike, so it cancels against the bare one.
 */
function processOnce(cmd, argv, cwd, env) {
  return new Promise((resolveRun, reject) => {
    const t0 = performance.now();
    const child = spawn("bash", ["-c", '"$@"; code=$?; times >&2; exit $code', "_", cmd, ...argv], {
      cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let wall = null;
    child.stdout.on("data", (d) => {
      out += d;
      if (wall === null && out.includes("\n")) wall = performance.now() - t0;
    });
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = out.split("\n")[0].trim();
      // The last line of `times`: the children's user and system time, as `0m0.045s 0m0.012s`.
      const times = err.trim().split("\n").pop().match(/^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/);
      if (code !== 0 || line !== EXPECTED || wall === null || !times) {
        reject(new Error(`${cmd} ${argv.join(" ")} exited ${code}, printed ${JSON.stringify(out.slice(0, 200))}: ${err.slice(0, 600)}`));
      } else {
        const cpu = (Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4])) * 1000;
        resolveRun({ wall, cpu });
      }
    });
  });
}

/** The pids of this process's children whose command is `name` (from /proc: every thread's `children`). */
function childrenNamed(name) {
  const pids = [];
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    let children = "";
    try {
      children = readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8");
    } catch {
      continue;
    }
    for (const pid of children.trim().split(/\s+/).filter(Boolean)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name) pids.push(pid);
      } catch {
        // exited meanwhile
      }
    }
  }
  return pids;
}

async function workerOnce(script, modulesRoot) {
  // workerd's CPU time up to its first answer (start, compile, script, the request): the process miniflare runs.
  const { ms, measured } = await workerdOnce(script, EXPECTED, { modulesRoot, whileUp: () => cpuOf(childrenNamed("workerd")) });
  return { wall: ms, cpu: measured };
}

// ---------------------------------------------------------------------------------------------------------------
// The starts of one runtime: name -> () => Promise<ms>.

/** The starts that are not a build's: started once per round whatever the builds compared. */
const SHARED = ["bare", "jose", "platform"];

/** The Workers of one side, bundled once for both ways of starting workerd: `{ dir, files, wasm }`. */
const workerSets = new Map();
async function workerFiles(side, app, input, bare) {
  if (workerSets.has(app)) return workerSets.get(app);
  const dir = join(app, "worker");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "wasm"), { recursive: true });
  const modules = moduleOf(app);
  for (const m of modules) copyFileSync(m, join(dir, "wasm", m.split("/").pop()));
  const wasm = modules.map((m) => `wasm/${m.split("/").pop()}`);
  const s = verifierScripts(input, "workerd");
  const compile = `${wasm.map((w, i) => `import m${i} from "./${w}";`).join("\n")}
globalThis.__modules = [${modules.map((_, i) => `m${i}`).join(", ")}];
ANSWER(${JSON.stringify(EXPECTED)});`;
  writeFileSync(join(dir, "compile.mjs"), workerScript(compile));
  const files = { compile: join(dir, "compile.mjs") };
  for (const name of ["imported", "constructed", "verify", "verifySync"]) files[name] = await bundleWorker(dir, name, workerScript(s[name]), app);
  if (side === "docauto") {
    files.jose = await bundleWorker(dir, "jose", workerScript(s.jose), app);
    files.platform = await bundleWorker(dir, "platform", workerScript(s.platform), app);
    writeFileSync(join(dir, "bare.mjs"), workerScript(bare));
    files.bare = join(dir, "bare.mjs");
  }
  const set = { dir, files, wasm };
  workerSets.set(app, set);
  return set;
}

async function startsOf(runtime, apps, input) {
  const starts = {};
  const bare = `ANSWER(${JSON.stringify(EXPECTED)});`;
  if (runtime === "workerd" || runtime === "workerd-serve") {
    for (const [side, app] of Object.entries(apps)) {
      const { dir, files, wasm } = await workerFiles(side, app, input, bare);
      for (const [name, file] of Object.entries(files)) {
        const key = SHARED.includes(name) ? name : `${side}:${name}`;
        starts[key] = runtime === "workerd"
          ? () => workerOnce(file, dir)
          : () => workerdServeOnce(dir, file.split("/").pop(), key.includes(":") ? wasm : [], EXPECTED);
      }
    }
    return starts;
  }
  const command = {
    node: [process.execPath, []],
    bun: [bin("bun"), []],
    deno: [bin("deno"), ["run", "--allow-read"]],
  }[runtime];
  const env = runtime === "deno" ? { DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(work, "deno-dir") } : {};
  for (const [side, app] of Object.entries(apps)) {
    const s = verifierScripts(input, runtime);
    const scripts = {
      compile: compileScript(runtime, moduleOf(app)),
      imported: processScript(s.imported),
      constructed: processScript(s.constructed),
      verify: processScript(s.verify),
      verifySync: processScript(s.verifySync),
    };
    if (side === "docauto") {
      Object.assign(scripts, { jose: processScript(s.jose), platform: processScript(s.platform), bare: processScript(bare) });
    }
    for (const [name, source] of Object.entries(scripts)) {
      const file = join(app, `${runtime}-${name}.mjs`);
      writeFileSync(file, source);
      const key = SHARED.includes(name) ? name : `${side}:${name}`;
      starts[key] = () => processOnce(command[0], [...command[1], file], app, env);
    }
  }
  return starts;
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * The JS files the Node entry of `docauto/webhooks` loads (the entry and what it imports, followed from file to file:
 * one since the entry is bundled) and their gzip -9 bytes, and its modules.
 */
function entryFiles(app) {
  const files = new Set();
  const follow = (file) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of importsOf(withoutComments(readFileSync(file, "utf8")))) {
      if (spec.startsWith("./") || spec.startsWith("../")) follow(join(dirname(file), spec));
    }
  };
  follow(join(app, "node_modules/docauto/webhooks/node.js"));
  const gz = (p) => gzipSync(readFileSync(p), { level: 9 }).length;
  return {
    jsFiles: files.size,
    jsGzip: [...files].reduce((a, p) => a + gz(p), 0),
    wasm: moduleOf(app).map((p) => ({ name: p.split("/").pop(), raw: statSync(p).size, gzip: gz(p) })),
  };
}

const ms = (x) => `${x.toFixed(1)} ms`;
const signed = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(1)} ms`;
/** The median of a side's costs over the rounds, and their quartiles. */
const spread = (xs) => {
  const [q1, q3] = quartiles(xs);
  return `${signed(median(xs))} (${q1.toFixed(1)} to ${q3.toFixed(1)})`;
};

async function main() {
  mkdirSync(work, { recursive: true });
  const signer = await TestSigner.generate({ now: NOW });
  const delivery = await signer.sign({ type: "agent_run.completed", processingId: EXPECTED, data: {} });
  const input = { jwks: signer.jwks, body: delivery.body, signature: delivery.signature };

  const apps = { docauto: installApp("app", PKG) };
  if (BASELINE) apps.baseline = installApp("app-baseline", resolve(BASELINE));
  const starts = {};
  for (const runtime of RUNTIMES) starts[runtime] = await startsOf(runtime, apps, input);

  const load = [loadavg()[0]];
  const samples = {};
  const cpuSamples = {};
  // Round 0 warms the caches (disk, Deno's module cache, miniflare's first spawn) and is left out.
  for (let round = 0; round <= ROUNDS; round++) {
    for (const runtime of RUNTIMES) {
      const names = Object.keys(starts[runtime]);
      // The order within a round turns each round, so no side always follows the same one.
      const order = names.map((_, i) => names[(i + round) % names.length]);
      const wall = {};
      const cpu = {};
      for (const name of order) ({ wall: wall[name], cpu: cpu[name] } = await starts[runtime][name]());
      if (round === 0) continue;
      (samples[runtime] ??= []).push(wall);
      (cpuSamples[runtime] ??= []).push(cpu);
    }
    load.push(loadavg()[0]);
    process.stderr.write(`round ${round}/${ROUNDS}\n`);
  }

  const sizes = Object.fromEntries(Object.entries(apps).map(([side, app]) => [side, entryFiles(app)]));
  const results = {};
  const rows = [];
  const splitRows = [];
  for (const runtime of RUNTIMES) {
    const rs = samples[runtime];
    const over = (name) => rs.map((r) => r[name] - r.bare);
    const ours = over("docauto:verify");
    const jose = over("jose");
    const ratio = median(ours) / median(jose);
    let before = "";
    if (BASELINE) {
      const theirs = over("baseline:verify");
      before = ` | ${spread(theirs)} (${(median(theirs) / median(jose)).toFixed(2)})`;
    }
    const cs = cpuSamples[runtime];
    const cpuOver = (name) => cs.map((r) => r[name] - r.bare);
    const cpuRatio = median(cpuOver("docauto:verify")) / median(cpuOver("jose"));
    const cpu = `${signed(median(cpuOver("docauto:verify")))} / ${signed(median(cpuOver("jose")))} = ${cpuRatio.toFixed(2)}`;
    // What each library costs over the platform's own checks: our cost and jose's, minus the floor's.
    const floor = median(over("platform"));
    const library = `${signed(median(ours) - floor)} / ${signed(median(jose) - floor)}`;
    rows.push(`| ${LABELS[runtime]} | ${ms(median(rs.map((r) => r.bare)))} | ${spread(ours)}${before} | ${spread(jose)} | **${ratio.toFixed(2)}** | ${cpu} | ${spread(over("platform"))} | ${library} |`);
    for (const side of Object.keys(apps)) {
      // Each cell: wall time, then (fresh processes) CPU time, medians of the per-round differences.
      const cell = (later, earlier) => {
        const wall = signed(median(rs.map((r) => r[later] - r[earlier])));
        return `${wall} (CPU ${signed(median(cs.map((r) => r[later] - r[earlier])))})`;
      };
      splitRows.push(`| ${LABELS[runtime]}${BASELINE ? ` (${side === "docauto" ? "this build" : "baseline"})` : ""} | ${cell(`${side}:compile`, "bare")} | ${cell(`${side}:imported`, `${side}:compile`)} | ${cell(`${side}:constructed`, `${side}:imported`)} | ${cell(`${side}:verify`, `${side}:constructed`)} | ${cell(`${side}:verify`, "bare")} | ${cell(`${side}:verifySync`, `${side}:constructed`)} |`);
    }
    results[runtime] = {
      label: LABELS[runtime],
      bareMs: median(rs.map((r) => r.bare)),
      oursMs: median(ours),
      joseMs: median(jose),
      platformMs: floor,
      ratio,
      cpuRatio,
    };
  }
  const lo = Math.min(...load);
  const hi = Math.max(...load);
  const cmd = `node tests/js/cold-start.mjs --rounds ${ROUNDS}${BASELINE ? " --baseline <pkg dir>" : ""}`;
  const size = (s) => `${s.wasm.map((w) => `\`${w.name}\` ${(w.gzip / 1024).toFixed(1)} KiB`).join(" + ")} gzip -9 of wasm, ${s.jsFiles} JS file${s.jsFiles === 1 ? "" : "s"} ${(s.jsGzip / 1024).toFixed(1)} KiB gzip -9`;
  const joseVersion = JSON.parse(readFileSync(join(root, "node_modules/jose/package.json"), "utf8")).version;
  const lines = [
    `\`${cmd}\`: ${versions()}, jose ${joseVersion}; the package installed from its \`npm pack\` tarball. ` +
      `${ROUNDS} interleaved rounds after a warm-up round; a side's cost is its time to the first verified answer minus the bare start of the same round ` +
      "(median over the rounds, the quartiles in parentheses); the ratio is our median cost over jose's. " +
      `Machine load (1-minute average) ${lo.toFixed(1)} to ${hi.toFixed(1)}.`,
    "",
    `| runtime | bare start | docauto \`verify\`, over bare${BASELINE ? " | baseline build, over bare (ratio)" : ""} | jose, over bare | docauto / jose | CPU time over bare: docauto / jose | platform alone, over bare | over the platform: docauto / jose |`,
    `| --- | --- | --- | --- | --- | --- | --- | --- |${BASELINE ? " --- |" : ""}`,
    ...rows,
    "",
    "Where our cost goes (medians of the per-round differences, wall time and CPU time): the module compiled alone, the entry imported and instantiated, " +
      "`new WebhookVerifier` from a static key set, the first `verify`; the last column is the first delivery through `verifySync` instead, over the constructor.",
    "",
    "| runtime | module compile | entry import + instantiation | constructor | first `verify` | total over bare | first `verifySync` instead of `verify` |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...splitRows,
    ...(BASELINE ? ["", `What \`docauto/webhooks\` loads: this build ${size(sizes.docauto)}; baseline ${size(sizes.baseline)}.`] : []),
  ];
  console.log(`BENCH ${JSON.stringify({ bench: "cold-start", rounds: ROUNDS, load: [lo, hi], versions: versions(), runtimes: results })}`);
  console.log("<!-- table -->");
  console.log(lines.join("\n"));
  console.log("<!-- /table -->");
}

/** The runtimes' versions, as their binaries from the root package.json report them. */
function versions() {
  const first = (cmd, argv) => {
    try {
      return execFileSync(cmd, argv, { stdio: ["ignore", "pipe", "ignore"], timeout: 30_000 }).toString().split("\n")[0].trim();
    } catch {
      return `${cmd.split("/").pop()} (version unknown)`;
    }
  };
  const miniflare = JSON.parse(readFileSync(join(root, "node_modules/miniflare/package.json"), "utf8")).version;
  return [
    `Node ${process.version}`,
    `Deno ${first(bin("deno"), ["--version"]).replace(/^deno /, "").replace(/ \(.*/, "")}`,
    `Bun ${first(bin("bun"), ["--version"])}`,
    first(bin("workerd"), ["--version"]),
    `miniflare ${miniflare}`,
  ].join(", ");
}

await main();
