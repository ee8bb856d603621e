#!/usr/bin/env node
// `npx docauto-emulator`: the emulator's wasm build on a socket (Node 20+), with the native binary's flags, start
// lines, routes and exit codes (2: a bad flag, 1: a start error). `--state FILE` loads the snapshot (and replays
// FILE.journal, as the native binary left it) at start, and writes the snapshot at start and at a clean stop
// (SIGINT, SIGTERM); the per-write journal is the native binary's alone.
import { spawn } from "node:child_process";
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, writeSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { initSync, Emulator, parseArgs, usage } from "./wasm/docauto.js";
import { listen } from "./serve.js";

initSync({ module: readFileSync(join(dirname(fileURLToPath(import.meta.url)), "wasm", "docauto-emulator.wasm")) });

function fail(message, code) {
  process.stderr.write(`docauto-emulator: ${message}\n`);
  process.exit(code);
}

function read(path, what) {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return undefined;
    fail(`${what}: cannot read ${path}: ${e.message}`, 1);
  }
}

/** The snapshot, written whole: temp file, fsync, rename (as the native binary writes it); the journal emptied. */
function writeSnapshot(path, text) {
  const tmp = path.replace(/(\.[^./]*)?$/, ".tmp");
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  if (existsSync(`${path}.journal`)) {
    const j = openSync(`${path}.journal`, "w");
    fsyncSync(j);
    closeSync(j);
  }
}

const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(usage());
  process.exit(0);
}
let flags;
try {
  flags = JSON.parse(parseArgs(args));
} catch (e) {
  fail(e.message, 2);
}

// The outgoing client trusts --ca-file like the native one: Node reads extra roots only at start
// (NODE_EXTRA_CA_CERTS), so the command runs itself again with them.
if (flags.caFile) {
  const pem = read(flags.caFile, "--ca-file");
  if (pem === undefined) fail(`--ca-file: cannot read ${flags.caFile}: no such file`, 1);
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) fail(`--ca-file: ${flags.caFile} holds no PEM certificate`, 1);
  if (process.env.NODE_EXTRA_CA_CERTS !== flags.caFile) {
    // An IPC channel ties the child to this process: if this one dies unannounced (SIGKILL), the channel closes and
    // the child stops too (below), instead of serving on as an orphan.
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], {
      stdio: ["inherit", "inherit", "inherit", "ipc"],
      env: { ...process.env, NODE_EXTRA_CA_CERTS: flags.caFile },
    });
    for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
    child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
    // the child serves; this process only waits for it
    await new Promise(() => {});
  }
}

const options = flags.options;
const cli = {};
if (flags.agents) {
  let files;
  try {
    files = readdirSync(flags.agents)
      .filter((f) => f.endsWith(".json"))
      .sort()
      .map((f) => join(flags.agents, f));
  } catch (e) {
    fail(`--agents ${flags.agents}: ${e.message}`, 1);
  }
  options.agents = files.map((f) => read(f, f) ?? fail(`${f}: no such file`, 1));
  cli.agentNames = files;
}
if (flags.state) {
  options.snapshot = read(flags.state, "--state");
  cli.journal = read(`${flags.state}.journal`, "--state");
  cli.statePath = flags.state;
}

const colon = flags.addr.lastIndexOf(":");
const hostname = flags.addr.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
const port = Number(flags.addr.slice(colon + 1));
let emulator;
try {
  emulator = await listen(Emulator, options, hostname, port, cli);
} catch (e) {
  fail(e.code === "cannot_bind" ? `--addr ${flags.addr}: ${e.message}` : e.message, 1);
}
const persist = () => {
  try {
    writeSnapshot(flags.state, emulator.snapshot());
    return true;
  } catch (e) {
    process.stderr.write(`docauto-emulator: cannot write state file ${flags.state}: ${e.message}\n`);
    return false;
  }
};
if (flags.state && !persist()) {
  await emulator.close();
  process.exit(1);
}
process.stdout.write(`${emulator.startLines()}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  const ok = !flags.state || persist();
  await emulator.close();
  // nothing is left to keep the process alive: it exits by itself
  if (!ok) process.exitCode = 1;
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
// started by the command itself for --ca-file (above): the parent is gone, so is this one (a clean stop)
if (process.send) {
  process.on("disconnect", stop);
  process.channel?.unref();
}
