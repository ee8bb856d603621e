// One state format for both builds: the native binary's `--state` file (snapshot plus journal) starts
// `createEmulator({ snapshot })` and `npx docauto-emulator --state`, and what the wasm build's `snapshot()` returns
// starts the native binary. The objects and the signing key (`kid`) survive each crossing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEmulator } from "docauto/emulator";
import { report } from "../common.mjs";
import { startCommand } from "./command.mjs";
import { checker } from "./flow.mjs";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const NATIVE = process.env.DOCAUTO_EMULATOR ?? `${root}target/debug/docauto-emulator`;
const KEY = "sk_test_docauto";
const { tally, check } = checker("state across builds", (l) => console.log(l));
const dir = mkdtempSync(join(tmpdir(), "docauto-emu-snapshot-"));
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

const kidOf = async (doFetch, base) => (await (await doFetch(`${base}/v1/webhooks/jwks.json`)).json()).keys[0].kid;
const endpoint = async (doFetch, base, id) => (await doFetch(`${base}/v1/webhooks/${id}`, { headers })).status;
const create = async (doFetch, base, url) => (await (await doFetch(`${base}/v1/webhooks`, { method: "POST", headers, body: JSON.stringify({ url }) })).json()).id;

// native -> wasm: the native binary's snapshot after a clean stop
const file = join(dir, "state.json");
const native = await startCommand(NATIVE, ["--state", file]);
const nativeKid = await kidOf(fetch, native.url);
const fromNative = await create(fetch, native.url, "https://hooks.example/native");
await native.stop();
const inProcess = createEmulator({ snapshot: readFileSync(file, "utf8") });
check("createEmulator({ snapshot }) holds what the native binary saved", (await endpoint(inProcess.fetch, inProcess.url, fromNative)) === 200);
check("... with the same signing key", (await kidOf(inProcess.fetch, inProcess.url)) === nativeKid);

// wasm -> native: snapshot() as the native --state file
const fromWasm = await create(inProcess.fetch, inProcess.url, "https://hooks.example/wasm");
const file2 = join(dir, "from-wasm.json");
writeFileSync(file2, inProcess.snapshot());
await inProcess.close();
const native2 = await startCommand(NATIVE, ["--state", file2]);
check("the native binary starts from snapshot()", (await endpoint(fetch, native2.url, fromWasm)) === 200 && (await endpoint(fetch, native2.url, fromNative)) === 200);
check("... with the same signing key", (await kidOf(fetch, native2.url)) === nativeKid);
await native2.stop();

// the npm command on a native file whose last write lives in the journal only (the native binary was killed), then
// the native binary on what the command wrote at its clean stop
const file3 = join(dir, "killed.json");
const killed = await startCommand(NATIVE, ["--state", file3]);
const journaled = await create(fetch, killed.url, "https://hooks.example/journaled");
await killed.stop("SIGKILL");
check("the killed native binary left the endpoint in its journal only", !readFileSync(file3, "utf8").includes(journaled) && readFileSync(`${file3}.journal`, "utf8").includes(journaled));
const bin = await startCommand(process.execPath, [`${root}pkg/emulator/bin.js`, "--state", file3]);
check("npx docauto-emulator --state replays the native journal", (await endpoint(fetch, bin.url, journaled)) === 200);
const fromBin = await create(fetch, bin.url, "https://hooks.example/bin");
check("npx docauto-emulator exits 0 after SIGINT", (await bin.stop()) === 0);
const native3 = await startCommand(NATIVE, ["--state", file3]);
check(
  "the native binary loads what the command wrote at its stop",
  (await endpoint(fetch, native3.url, fromBin)) === 200 && (await endpoint(fetch, native3.url, journaled)) === 200,
);
await native3.stop();
rmSync(dir, { recursive: true, force: true });

report("docauto/emulator: one state format for both builds", tally);
