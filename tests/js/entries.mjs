// One module per use: each entry of the package resolves in Node (import and require) to its own files, exports
// what its use needs and nothing of the others, and exports no init machinery. The wasm each entry loads is its own.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Checks, assert } from "./suite.mjs";
import { importsOf, loadFixtures, report, withoutComments } from "./common.mjs";

const require = createRequire(import.meta.url);
const t = new Checks(console.log);

const ENTRIES = [
  {
    name: "docauto",
    dir: "",
    module: "docauto-client.wasm",
    has: ["DocAuto", "APIError", "NotFoundError", "validateExtractionSchema"],
    lacks: ["WebhookVerifier", "WebhookVerificationError", "RealtimeTranscriber", "RealtimeError", "TestSigner"],
  },
  {
    name: "docauto/webhooks",
    dir: "webhooks/",
    module: "docauto-webhooks.wasm",
    // Its P-256 check, a second module loaded on first need.
    companion: "docauto-webhooks-p256.wasm",
    has: ["WebhookVerifier", "WebhookVerificationError", "redisStore", "postgresStore", "d1Store", "durableObjectStore",
      "DedupeObject"],
    // nor the glue's own hand-overs (node:crypto, the P-256 module)
    lacks: ["DocAuto", "RealtimeTranscriber", "__useNodeCrypto", "__useP256"],
  },
  {
    name: "docauto/realtime",
    dir: "realtime/",
    module: "docauto-realtime.wasm",
    has: ["RealtimeTranscriber", "RealtimeError"],
    lacks: ["DocAuto", "WebhookVerifier"],
  },
  {
    name: "docauto/testing",
    dir: "testing/",
    module: "docauto-testing.wasm",
    has: ["TestSigner", "WebhookVerificationError"],
    lacks: ["DocAuto", "WebhookVerifier", "RealtimeTranscriber", "redisStore"],
  },
  {
    name: "docauto/emulator",
    dir: "emulator/",
    module: "docauto-emulator.wasm",
    has: ["createEmulator", "startEmulator"],
    // the wasm class behind them is not the API
    lacks: ["DocAuto", "WebhookVerifier", "RealtimeTranscriber", "TestSigner", "Emulator"],
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

await t.run("only a verifying entry's Node file takes node:crypto, and not in Bun; the Deno file touches neither node: modules nor process (Deno's Node layer would start); no browser, workerd or edge file imports a node: module", () => {
  for (const entry of ENTRIES) {
    const read = (file) => readFileSync(new URL(`../../pkg/${entry.dir}${file}`, import.meta.url), "utf8");
    for (const file of ["index.js", "workerd.js", "edge-light.js"]) {
      assert(!/from\s+["']node:/.test(read(file)), `${entry.dir}${file} imports a node: module`);
    }
    const deno = read("deno.js");
    assert(!/from\s+["']node:|import\(["']node:|\bprocess\./.test(deno.replace(/^\/\/.*$/gm, "")), `${entry.dir}deno.js touches node: modules or process`);
    const verifies = entry.has.includes("WebhookVerifier");
    const node = read("node.js");
    assert(!/node:crypto"\)?;?\s*$/m.test(node.replace(/^\/\/.*$/gm, "").replace(/.*getBuiltinModule.*/g, "")), `${entry.dir}node.js imports node:crypto outside the hand-over`);
    const handsOver = /if \(typeof Bun === "undefined"\) __useNodeCrypto\(process\.getBuiltinModule\("node:crypto"\), true\);/.test(node);
    assert(handsOver === verifies, `${entry.dir}node.js: hands node:crypto over (not in Bun) is not ${verifies}`);
  }
});

await t.run("every generated entry imports from its glue only names the glue exports (strict ESM linking: Turbopack, webpack)", async () => {
  for (const entry of ENTRIES) {
    const glue = readFileSync(new URL(`../../pkg/${entry.dir}wasm/docauto.js`, import.meta.url), "utf8");
    for (const file of ["index.js", "node.js", "deno.js", "workerd.js", "edge-light.js"]) {
      const src = readFileSync(new URL(`../../pkg/${entry.dir}${file}`, import.meta.url), "utf8");
      assert(!/import \* as/.test(src), `${entry.dir}${file} imports a namespace (a missing name would link as undefined)`);
      for (const m of src.matchAll(/import \{([^}]*)\} from "\.\/wasm\/docauto\.js"/g)) {
        for (const name of m[1].split(",").map((n) => n.trim()).filter(Boolean)) {
          assert(new RegExp(`export (function|class|const|let) ${name}\\b|export \\{[^}]*\\b${name}\\b`).test(glue), `${entry.dir}${file} imports ${name}, which its glue does not export`);
        }
      }
    }
  }
});

await t.run("the entries a fresh process imports as they are (node.js: Node and Bun; deno.js) are one file each: they import nothing of the package and build no URL outside their wasm/", () => {
  // docauto/emulator's entries share its hand-written core.js and serve.js with its other entries and its bin.
  for (const entry of ENTRIES.filter((e) => e.name !== "docauto/emulator")) {
    for (const file of ["node.js", "deno.js"]) {
      // Code only: the glue's doc comments hold import examples.
      const code = withoutComments(readFileSync(new URL(`../../pkg/${entry.dir}${file}`, import.meta.url), "utf8"));
      const imported = importsOf(code);
      assert(imported.every((i) => i.startsWith("node:")), `${entry.dir}${file} imports ${imported.filter((i) => !i.startsWith("node:")).join(", ")}`);
      const urls = [...code.matchAll(/new URL\(\s*["'`]([^"'`]+)["'`]/g)].map((m) => m[1]);
      assert(urls.every((u) => u.startsWith("./wasm/")), `${entry.dir}${file} builds the URLs ${urls.join(", ")}`);
    }
  }
});

await t.run("each entry's module has its own file name, and every file of an entry names that module (esbuild users copy them into one folder)", () => {
  const all = ENTRIES.flatMap((e) => (e.companion ? [e.module, e.companion] : [e.module]));
  assert(new Set(all).size === all.length, "two modules share a file name");
  for (const entry of ENTRIES) {
    readFileSync(new URL(`../../pkg/${entry.dir}wasm/${entry.module}`, import.meta.url));
    for (const file of ["index.js", "node.js", "deno.js", "workerd.js", "edge-light.js", "wasm/docauto.js"]) {
      const src = readFileSync(new URL(`../../pkg/${entry.dir}${file}`, import.meta.url), "utf8");
      const named = [...src.matchAll(/["'/]([\w-]+\.wasm)["'?]/g)].map((m) => m[1]);
      const own = file === "wasm/docauto.js" || !entry.companion ? [entry.module] : [entry.module, entry.companion];
      assert(named.includes(entry.module) && named.every((n) => own.includes(n)), `${entry.dir}${file} names ${named.join(", ")}`);
    }
    if (entry.companion) {
      readFileSync(new URL(`../../pkg/${entry.dir}wasm/${entry.companion}`, import.meta.url));
      const glue = readFileSync(new URL(`../../pkg/${entry.dir}wasm/p256.js`, import.meta.url), "utf8");
      const named = [...glue.matchAll(/["'/]([\w-]+\.wasm)["'?]/g)].map((m) => m[1]);
      assert(named.length > 0 && named.every((n) => n === entry.companion), `${entry.dir}wasm/p256.js names ${named.join(", ")}`);
    }
  }
});

await t.run("the glue's initSync takes a WebAssembly.Module compiled in another realm (Next.js edge routes)", async () => {
  const { runInNewContext } = await import("node:vm");
  const bytes = readFileSync(new URL("../../pkg/webhooks/wasm/docauto-webhooks.wasm", import.meta.url));
  const foreign = runInNewContext("new WebAssembly.Module(bytes)", { bytes });
  assert(!(foreign instanceof WebAssembly.Module), "the module is not from another realm");
  const glue = await import(`../../pkg/webhooks/wasm/docauto.js?realm-test`);
  glue.initSync({ module: foreign });
  const verifier = new glue.WebhookVerifier({ baseUrl: "https://api.example" });
  assert(typeof verifier.verify === "function", "no verifier");
});

await t.run("docauto/emulator: no other entry has createEmulator; its shared files import no node: module", async () => {
  for (const entry of ENTRIES.filter((e) => e.name !== "docauto/emulator")) {
    assert(!("createEmulator" in (await import(entry.name))), `${entry.name} exports createEmulator`);
  }
  // core.js is imported by every entry of it (browsers, workerd, edge too); serve.js loads node:http only when listening
  const core = readFileSync(new URL("../../pkg/emulator/core.js", import.meta.url), "utf8");
  assert(!/from\s+["']node:|import\(["']node:/.test(core), "emulator/core.js imports a node: module");
  const serve = readFileSync(new URL("../../pkg/emulator/serve.js", import.meta.url), "utf8");
  assert(!/from\s+["']node:/.test(serve), "emulator/serve.js imports a node: module statically");
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

await t.run("docauto/webhooks: the P-256 check no host answers comes from its second module, loaded on first need; without it verifySync refuses (invalid_signature, saying why) and verify still works", async () => {
  const fx = loadFixtures();
  const wrongKey = fx.cases.find((c) => c.name.startsWith("wrong key under a known kid"));
  const dir = new URL("../../pkg/webhooks/wasm/", import.meta.url);
  // The glue alone, no entry: no node:crypto and no P-256 loader handed over.
  const glue = await import(new URL("docauto.js?p256-test", dir).href);
  glue.initSync({ module: readFileSync(new URL("docauto-webhooks.wasm", dir)) });
  const v = new glue.WebhookVerifier({ jwks: fx.jwks, now: fx.now });
  const refusal = (f) => {
    try {
      f();
    } catch (e) {
      return e;
    }
    return undefined;
  };
  const none = refusal(() => v.verifySync(fx.goodBody, fx.goodToken));
  assert(none?.code === "invalid_signature" && /P-256 module/.test(none.message), `without the module: ${none?.code} ${none?.message}`);
  assert((await v.verify(fx.goodBody, fx.goodToken)).eventId === fx.goodEnvelope.eventId, "verify (WebCrypto) failed without the module");
  glue.__useP256(() => {
    throw new Error("the module is missing");
  });
  const thrown = refusal(() => v.verifySync(fx.goodBody, fx.goodToken));
  assert(thrown?.code === "invalid_signature" && /P-256 module/.test(thrown.message), `a loader that throws: ${thrown?.code} ${thrown?.message}`);
  let loads = 0;
  const p256 = await import(new URL("p256.js", dir).href);
  glue.__useP256(() => {
    loads++;
    p256.initSync({ module: readFileSync(new URL("docauto-webhooks-p256.wasm", dir)) });
    return p256.verifyP256;
  });
  assert(loads === 0, "the module was loaded before it was needed");
  assert(v.verifySync(fx.goodBody, fx.goodToken).eventId === fx.goodEnvelope.eventId, "a valid delivery did not verify");
  const wrong = refusal(() => v.verifySync(wrongKey.body, wrongKey.header));
  assert(wrong?.code === "invalid_signature" && !/P-256 module/.test(wrong.message), `a wrong-key signature: ${wrong?.code} ${wrong?.message}`);
  assert(loads === 1, `the module was loaded ${loads} times`);
});

// ---- one class per error name: across entries, and across two copies of the package ----

/** The classes each entry's declarations export (pkg/<dir>/index.d.ts), by entry name. */
function declaredClasses() {
  const byEntry = new Map();
  for (const entry of ENTRIES) {
    const dts = readFileSync(new URL(`../../pkg/${entry.dir}index.d.ts`, import.meta.url), "utf8");
    const names = [...dts.matchAll(/export \{([^}]*)\}/g)]
      .flatMap((m) => m[1].split(","))
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith("type "));
    byEntry.set(entry.name, names);
  }
  return byEntry;
}

/** The rejection (or exception) of `f`. */
async function failure(f) {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error("it did not fail");
}

await t.run("every error class two entries export is one class: an instance from either entry is instanceof the other's (import and require)", async () => {
  const exporters = new Map();
  for (const [entry, names] of declaredClasses()) {
    for (const name of names.filter((n) => n.endsWith("Error"))) exporters.set(name, [...(exporters.get(name) ?? []), entry]);
  }
  const shared = [...exporters].filter(([, entries]) => entries.length > 1);
  assert(shared.some(([name]) => name === "WebhookVerificationError"), `shared error classes: ${JSON.stringify(shared)}`);
  for (const [name, entries] of shared) {
    for (const a of entries) {
      const made = new (await import(a))[name]("invalid_input", "made by hand");
      for (const b of entries) {
        assert(made instanceof (await import(b))[name], `new ${name} of ${a} is not instanceof ${name} of ${b} (import)`);
        assert(made instanceof require(b)[name], `new ${name} of ${a} is not instanceof ${name} of ${b} (require)`);
      }
    }
  }
});

await t.run("an error docauto/webhooks' verifier throws is instanceof docauto/testing's WebhookVerificationError, and one TestSigner throws is instanceof docauto/webhooks' (import and require)", async () => {
  const webhooks = await import("docauto/webhooks");
  const testing = await import("docauto/testing");
  const { jwks } = await testing.TestSigner.generate();
  const verifier = new webhooks.WebhookVerifier({ jwks });
  const thrownByVerifier = [
    await failure(() => verifier.verify("{}", "not.a.token")),
    await failure(() => verifier.verifySync("{}", "not.a.token")),
  ];
  const thrownBySigner = [
    await failure(() => testing.TestSigner.generate({ privateJwk: { kty: "oct" } })),
    await failure(async () => (await testing.TestSigner.generate()).sign(42)),
  ];
  const pairs = [
    ["docauto/webhooks", thrownByVerifier, "docauto/testing"],
    ["docauto/testing", thrownBySigner, "docauto/webhooks"],
  ];
  for (const [from, errors, other] of pairs) {
    for (const e of errors) {
      const shown = `${e?.name} [${e?.code}] ${e?.message}`;
      assert(e instanceof (await import(from)).WebhookVerificationError, `${from} threw ${shown}, not its own WebhookVerificationError`);
      assert(e instanceof (await import(other)).WebhookVerificationError, `${from} threw ${shown}: not instanceof WebhookVerificationError of ${other} (import)`);
      assert(e instanceof require(other).WebhookVerificationError, `${from} threw ${shown}: not instanceof WebhookVerificationError of ${other} (require)`);
      assert(e instanceof Error && !(e instanceof (await import("docauto")).APIError), `${from} threw ${shown}: an APIError`);
    }
  }
});

await t.run("an entry's one-file Node and Deno entries hold only the error classes it exports: the others, defined in the same errors.js, are dropped by the bundler", () => {
  const all = ["APIError", "NotFoundError", "APITimeoutError", "WebhookVerificationError", "RealtimeError"];
  for (const entry of ENTRIES.filter((e) => e.name !== "docauto/emulator")) {
    for (const file of ["node.js", "deno.js"]) {
      const code = withoutComments(readFileSync(new URL(`../../pkg/${entry.dir}${file}`, import.meta.url), "utf8"));
      const defined = all.filter((name) => new RegExp(`\\b${name} = `).test(code));
      const expected = all.filter((name) => entry.has.includes(name) || (entry.name === "docauto" && name !== "WebhookVerificationError" && name !== "RealtimeError"));
      assert(JSON.stringify(defined) === JSON.stringify(expected), `${entry.dir}${file} defines ${defined.join(", ")}; expected ${expected.join(", ")}`);
    }
  }
});

await t.run("two copies of the package in one process (a second version installed beside the first): every error class of one is instanceof-compatible with the same class of the other, subclasses follow the chain, an application's own subclass keeps the ordinary check", async () => {
  const { cpSync, mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { pathToFileURL } = await import("node:url");
  const dir = mkdtempSync(join(tmpdir(), "docauto-copy-"));
  try {
    cpSync(new URL("../../pkg/", import.meta.url), join(dir, "docauto"), { recursive: true });
    const copy = (sub) => import(pathToFileURL(join(dir, "docauto", sub, "node.js")).href);
    const [a, b] = [await import("docauto"), await copy("")];
    const [aw, bw] = [await import("docauto/webhooks"), await copy("webhooks")];
    const [ar, br] = [await import("docauto/realtime"), await copy("realtime")];
    assert(a.APIError !== b.APIError && aw.WebhookVerificationError !== bw.WebhookVerificationError, "the copy shares the first one's classes");

    // Errors the copy's client throws, through its own request path: a 404 answer and a fetch that fails.
    const answer = (status) => async () => new Response(JSON.stringify({ code: "not_found", message: "no", retryable: false }), { status, headers: { "content-type": "application/json" } });
    const client = (fetch) => new b.DocAuto({ apiKey: "sk_test_copy", baseUrl: "https://api.example", maxRetries: 0, logLevel: "off", fetch });
    const notFound = await failure(() => client(answer(404)).runs.retrieve("exr_1"));
    const connection = await failure(() => client(async () => { throw new TypeError("fetch failed"); }).runs.retrieve("exr_1"));
    assert(notFound instanceof b.NotFoundError && connection instanceof b.APIConnectionError, `the copy threw ${notFound?.name} and ${connection?.name}`);
    assert(notFound instanceof a.NotFoundError && notFound instanceof a.APIError, `the copy's ${notFound.name} is not a NotFoundError and APIError of the first`);
    assert(!(notFound instanceof a.ConflictError) && !(notFound instanceof a.APIConnectionError), "the copy's NotFoundError is instanceof another class of the first");
    assert(connection instanceof a.APIConnectionError && connection instanceof a.APIError && !(connection instanceof a.APITimeoutError), `the copy's ${connection.name} against the first's classes`);
    const timeout = new b.APITimeoutError("slow", {});
    assert(timeout instanceof a.APITimeoutError && timeout instanceof a.APIConnectionError && timeout instanceof a.APIError, "the copy's APITimeoutError is not an APITimeoutError, APIConnectionError and APIError of the first");

    // Every error class, both ways.
    for (const [one, two] of [[a, b], [aw, bw], [ar, br]]) {
      for (const name of Object.keys(one).filter((n) => n.endsWith("Error"))) {
        assert(new one[name]("invalid_input", "x") instanceof two[name] && new two[name]("invalid_input", "x") instanceof one[name], `${name}: not one class across the copies`);
      }
    }
    const verified = await failure(() => new bw.WebhookVerifier({ jwks: { keys: [] } }).verify("{}", "not.a.token"));
    assert(verified instanceof aw.WebhookVerificationError, `the copy's verifier threw ${verified?.name}, not the first's WebhookVerificationError`);
    assert(!(verified instanceof a.APIError) && !(new b.APIError("x") instanceof aw.WebhookVerificationError), "a class of one name is instanceof a class of another");
    assert(new br.RealtimeError("closed", "x") instanceof ar.RealtimeError, "RealtimeError: not one class across the copies");

    // An application's subclass: its instances are APIErrors of both copies; an APIError is not one of its instances.
    class AppError extends a.APIError {}
    assert(new AppError("x") instanceof a.APIError && new AppError("x") instanceof b.APIError, "an application's subclass of APIError is not an APIError of both copies");
    assert(!(new a.APIError("x") instanceof AppError) && !(notFound instanceof AppError), "an APIError is instanceof an application's subclass");
    assert(!(null instanceof a.APIError) && !("APIError" instanceof a.APIError) && !({ name: "APIError" } instanceof a.APIError), "a value that is not an error is an APIError");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

report("package entries (node)", t);
