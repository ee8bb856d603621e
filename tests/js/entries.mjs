// One module per use: each entry of the package resolves in Node (import and require) to its own files, exports
// what its use needs and nothing of the others, and exports no init machinery. The wasm each entry loads is its own.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Checks, assert } from "./suite.mjs";
import { report } from "./common.mjs";

const require = createRequire(import.meta.url);
const t = new Checks(console.log);

const ENTRIES = [
  {
    name: "docauto",
    dir: "",
    has: ["DocAuto", "WebhookVerifier", "RealtimeTranscriber", "APIError", "WebhookVerificationError", "RealtimeError"],
    lacks: [],
  },
  { name: "docauto/webhooks", dir: "webhooks/", has: ["WebhookVerifier", "WebhookVerificationError"], lacks: ["DocAuto", "RealtimeTranscriber"] },
  { name: "docauto/realtime", dir: "realtime/", has: ["RealtimeTranscriber", "RealtimeError"], lacks: ["DocAuto", "WebhookVerifier"] },
  {
    name: "docauto/testing",
    dir: "testing/",
    has: ["TestSigner", "WebhookVerificationError"],
    lacks: ["DocAuto", "WebhookVerifier", "RealtimeTranscriber"],
  },
  {
    name: "docauto/emulator",
    dir: "emulator/",
    has: ["createEmulator", "startEmulator"],
    // the wasm class behind them is not the API
    lacks: ["DocAuto", "WebhookVerifier", "RealtimeTranscriber", "Emulator"],
  },
];

for (const entry of ENTRIES) {
  await t.run(`${entry.name} resolves to its own node entry (import) and index.cjs (require)`, () => {
    const imported = import.meta.resolve(entry.name);
    assert(imported.endsWith(`/pkg/${entry.dir}node.js`), `import resolved to ${imported}`);
    const required = require.resolve(entry.name);
    assert(required.endsWith(`/pkg/${entry.dir}index.cjs`), `require resolved to ${required}`);
  });
  await t.run(`${entry.name} exports what its use needs, nothing of the other uses, no init function`, async () => {
    const mod = await import(entry.name);
    for (const name of entry.has) assert(typeof mod[name] === "function", `${name} is not exported`);
    for (const name of entry.lacks) assert(!(name in mod), `${name} is exported`);
    assert(!("initSync" in mod) && !("default" in mod), "init machinery is exported");
  });
  await t.run(`${entry.name}: require and import share one instance`, async () => {
    const mod = await import(entry.name);
    const cjs = require(entry.name);
    for (const name of entry.has) assert(cjs[name] === mod[name], `${name} differs between require and import`);
  });
}

await t.run("only the Node, Bun and Deno entries import node:crypto; browser, workerd and edge entries import no node: module", () => {
  for (const dir of ["", "webhooks/", "realtime/"]) {
    const read = (file) => readFileSync(new URL(`../../pkg/${dir}${file}`, import.meta.url), "utf8");
    for (const file of ["index.js", "workerd.js", "edge-light.js"]) {
      assert(!/from\s+["']node:/.test(read(file)), `${dir}${file} imports a node: module`);
    }
    for (const file of ["node.js", "deno.js"]) {
      assert(/from\s+"node:crypto"/.test(read(file)), `${dir}${file} does not import node:crypto`);
    }
  }
});

await t.run("docauto/emulator: its browser, workerd and edge entries import no node: module; no other entry has createEmulator", async () => {
  const read = (file) => readFileSync(new URL(`../../pkg/emulator/${file}`, import.meta.url), "utf8");
  for (const file of ["index.js", "workerd.js", "edge-light.js", "core.js"]) {
    assert(!/from\s+["']node:/.test(read(file)) && !/import\(["']node:/.test(read(file)), `emulator/${file} imports a node: module`);
  }
  for (const name of ["docauto", "docauto/webhooks", "docauto/realtime", "docauto/testing"]) {
    assert(!("createEmulator" in (await import(name))), `${name} exports createEmulator`);
  }
});

await t.run("docauto/realtime: a transcriber is constructed with a ticket URL and refuses a bad one with a coded error", async () => {
  const { RealtimeTranscriber, RealtimeError } = await import("docauto/realtime");
  // Node 20 has no WebSocket: the constructor takes one (never called here: nothing starts).
  const WebSocket = class {};
  const ok = new RealtimeTranscriber({ url: "wss://realtime.example/v1/realtime/sessions/rts_1?ticket=t", WebSocket });
  assert(typeof ok.start === "function", "no start()");
  let caught;
  try {
    new RealtimeTranscriber({ url: "http://realtime.example/", WebSocket });
  } catch (e) {
    caught = e;
  }
  assert(caught instanceof RealtimeError && typeof caught.code === "string", `expected a RealtimeError, got ${caught}`);
});

await t.run("docauto/testing: a signer's token passes the docauto/webhooks verifier; no other entry has TestSigner", async () => {
  const { TestSigner } = await import("docauto/testing");
  const { WebhookVerifier } = await import("docauto/webhooks");
  const signer = await TestSigner.generate();
  const { body, signature } = await signer.sign({ type: "agent_run.waiting", processingId: "agr_1", data: {} });
  const event = await new WebhookVerifier({ jwks: signer.jwks }).verify(body, signature);
  assert(event.processingId === "agr_1", `event ${JSON.stringify(event)}`);
  for (const name of ["docauto", "docauto/webhooks", "docauto/realtime"]) {
    assert(!("TestSigner" in (await import(name))), `${name} exports TestSigner`);
  }
});

report("package entries (node)", t);
