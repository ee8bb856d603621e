// cargo xtask bench: verifications/s of docauto's verify / verifySync vs a jose-based verifier (same process,
// ~745-byte body, median of 9 interleaved rounds of 1000, ratios per round) in Node, and of verify vs jose in
// workerd (miniflare) and headless Chromium (jose in the same isolate); SHA-256 of a body by the host vs sha2 in
// wasm; .wasm sizes, cold start in Node and workerd. Prints a markdown table after the line `<!-- table -->`.
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from "jose";
import { execFileSync } from "node:child_process";
import { createHash, createPublicKey, hash as nodeHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { Miniflare } from "miniflare";
import { WebhookVerifier } from "docauto/webhooks";
import { bundle, writeWorker } from "./bundle.mjs";
import { serveStatic } from "../../www/static.mjs";
import { launchChromium } from "./chromium.mjs";

// Short batches, interleaved, and the ratio taken round by round: load from other processes shifts between batches,
// and a per-round ratio compares batches that ran side by side.
const ROUNDS = 9;
const N = 1000;
const NOW = 1_790_000_000;
const root = fileURLToPath(new URL("../../", import.meta.url));

export async function benchInput() {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "bench-1", use: "sig", alg: "ES256" };
  const envelope = {
    eventId: "evt_01J8Z6Q2W3E4R5T6Y7U8I9O0PA",
    type: "agent_run.completed",
    processingId: "agr_01J8Z6Q2W3E4R5T6Y7U8I9O0PB",
    occurredAt: "2026-09-21T12:00:00.000Z",
    data: {
      object: "agent_run",
      id: "agr_01J8Z6Q2W3E4R5T6Y7U8I9O0PB",
      status: "completed",
      metadata: { customerId: "cus_48213", orderId: "ord_2026_000123", region: "eu-west" },
      progress: { tasks: { total: 4, completed: 4 } },
      result: { invoiceNumber: "INV-2026-0042", total: 1234.56, currency: "EUR", vendor: "Müller & Söhne GmbH" },
      output: { files: [{ url: "https://files.example/out/agr_01J8Z6Q2W3E4R5T6Y7U8I9O0PB/summary.pdf", name: "summary.pdf" }] },
      incomplete: false,
    },
  };
  let body = JSON.stringify(envelope);
  // Pad the metadata to the size of a typical delivery (about 745 bytes).
  envelope.data.metadata.note = "x".repeat(Math.max(0, 745 - Buffer.byteLength(body) - 10));
  body = JSON.stringify(envelope);
  const token = await new SignJWT({
    iss: "svc-process", processingId: envelope.processingId, eventId: envelope.eventId, type: envelope.type,
    bodySha256: createHash("sha256").update(body).digest("base64url"), iat: NOW - 10, exp: NOW + 290,
  }).setProtectedHeader({ alg: "ES256", kid: jwk.kid }).sign(privateKey);
  const sign = (claims) => new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: jwk.kid }).sign(privateKey);
  return { jwks: { keys: [jwk] }, body, token, bytes: Buffer.byteLength(body), sign };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function rate(fn, cpu = []) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await fn();
  const t1 = performance.now();
  const c = process.cpuUsage(c0);
  // CPU time of every thread of the process (jose's ECDSA runs on libuv's pool, ours on the main thread): what a
  // verification costs whatever else the machine is doing.
  cpu.push((c.user + c.system) / N);
  return N / ((t1 - t0) / 1000);
}

async function speed(input) {
  const { jwks, body, token } = input;
  const v = new WebhookVerifier({ jwks, now: NOW });
  const keySet = createLocalJWKSet(jwks);
  const jose = async () => {
    const { payload } = await jwtVerify(token, keySet, {
      algorithms: ["ES256"], issuer: "svc-process", currentDate: new Date(NOW * 1000),
    });
    if (createHash("sha256").update(body).digest("base64url") !== payload.bodySha256) throw new Error("body");
    const e = JSON.parse(body);
    if (e.eventId !== payload.eventId || e.type !== payload.type || e.processingId !== payload.processingId) {
      throw new Error("claims");
    }
    return e;
  };
  const ours = () => v.verify(body, token);
  const sync = () => v.verifySync(body, token);
  for (let i = 0; i < 500; i++) {
    await jose();
    await ours();
    sync();
  }
  const r = { jose: [], verify: [], verifySync: [], verifyRatio: [], verifySyncRatio: [], joseCpu: [], verifyCpu: [], verifySyncCpu: [] };
  for (let k = 0; k < ROUNDS; k++) {
    r.jose.push(await rate(jose, r.joseCpu));
    r.verify.push(await rate(ours, r.verifyCpu));
    r.verifySync.push(await rate(sync, r.verifySyncCpu));
    r.verifyRatio.push(r.verify[k] / r.jose[k]);
    r.verifySyncRatio.push(r.verifySync[k] / r.jose[k]);
  }
  return Object.fromEntries(Object.entries(r).map(([k, xs]) => [k, median(xs)]));
}

function sizes(path = "pkg/webhooks/wasm/docauto-webhooks.wasm") {
  const wasm = readFileSync(root + path);
  return {
    raw: wasm.length,
    gzip: gzipSync(wasm, { level: 9 }).length,
    brotli: brotliCompressSync(wasm, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

/** Import + first verify in a fresh Node process (median of 5 processes). */
function coldNode(input, specifier = "docauto/webhooks") {
  const script = `
    const t0 = performance.now();
    const { WebhookVerifier } = await import("${specifier}");
    const t1 = performance.now();
    const v = new WebhookVerifier({ jwks: ${JSON.stringify(input.jwks)}, now: ${NOW} });
    await v.verify(${JSON.stringify(input.body)}, ${JSON.stringify(input.token)});
    const t2 = performance.now();
    await v.verify(${JSON.stringify(input.body)}, ${JSON.stringify(input.token)});
    const t3 = performance.now();
    console.log(JSON.stringify({ importMs: t1 - t0, firstMs: t2 - t1, secondMs: t3 - t2 }));`;
  const file = root + "target/docauto-js/cold.mjs";
  writeFileSync(file, script);
  const runs = Array.from({ length: 5 }, () =>
    JSON.parse(execFileSync("node", [file], { cwd: root, timeout: 30_000 }).toString()));
  return {
    importMs: median(runs.map((r) => r.importMs)),
    firstMs: median(runs.map((r) => r.firstMs)),
    secondMs: median(runs.map((r) => r.secondMs)),
  };
}

/** workerd: start + first request with the package vs the same without it (median of 3). */
async function coldWorkerd(input) {
  const dir = root + "target/docauto-js/bench-worker/";
  mkdirSync(dir, { recursive: true });
  writeFileSync(dir + "with.mjs", `import { WebhookVerifier } from "docauto/webhooks";
export default { async fetch(req, env) {
  const v = new WebhookVerifier({ jwks: JSON.parse(env.JWKS), now: ${NOW} });
  const e = await v.verify(env.BODY, env.TOKEN);
  return new Response(e.eventId);
} };`);
  await writeWorker(dir + "with.mjs", dir);
  writeFileSync(dir + "without.mjs", `export default { async fetch(req, env) { return new Response(env.BODY.slice(0, 4)); } };`);
  const once = async (script) => {
    const t0 = performance.now();
    const mf = new Miniflare({
      modules: true, scriptPath: dir + script, compatibilityDate: "2025-09-01",
      modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
      bindings: { JWKS: JSON.stringify(input.jwks), BODY: input.body, TOKEN: input.token },
    });
    const res = await mf.dispatchFetch("http://localhost/");
    const text = await res.text();
    const ms = performance.now() - t0;
    await mf.dispose();
    if (res.status !== 200) throw new Error(`worker answered ${res.status}: ${text.slice(0, 300)}`);
    return ms;
  };
  const withPkg = [];
  const without = [];
  for (let i = 0; i < 3; i++) {
    without.push(await once("without.mjs"));
    withPkg.push(await once("worker.mjs"));
  }
  return { withMs: median(withPkg), withoutMs: median(without) };
}

/** The isolate's verifiers over `input` without its signing function (it does not cross into the isolate). */
const isolateInput = ({ jwks, body, token }) => ({ jwks, body, token });

/** verify vs jose inside one workerd isolate (miniflare); each batch of N is timed from outside, since workerd's
 * clocks stand still while a request computes. */
async function isolateWorkerd(input) {
  const dir = root + "target/docauto-js/bench-isolate-worker/";
  mkdirSync(dir, { recursive: true });
  writeFileSync(dir + "entry.mjs", `import { runners, loop } from ${JSON.stringify(root + "tests/js/bench-isolate.mjs")};
let r;
export default { async fetch(req, env) {
  r ??= runners(JSON.parse(env.INPUT), ${NOW});
  const u = new URL(req.url);
  await loop(r[u.searchParams.get("impl")], Number(u.searchParams.get("n")));
  return new Response("ok");
} };`);
  await writeWorker(dir + "entry.mjs", dir);
  const mf = new Miniflare({
    modules: true, scriptPath: dir + "worker.mjs", compatibilityDate: "2025-09-01",
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    bindings: { INPUT: JSON.stringify(isolateInput(input)) },
  });
  try {
    const batch = async (impl, n) => {
      const t0 = performance.now();
      const res = await mf.dispatchFetch(`http://localhost/?impl=${impl}&n=${n}`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`worker answered ${res.status}: ${text.slice(0, 300)}`);
      return n / ((performance.now() - t0) / 1000);
    };
    return await compareRounds(batch);
  } finally {
    await mf.dispose();
  }
}

/** verify vs jose in one headless Chromium page (the package's browser entry, jose bundled for the browser). */
async function isolateChromium(input) {
  const dir = root + "target/docauto-js/bench-isolate-browser/";
  mkdirSync(dir, { recursive: true });
  const { code } = await bundle(root + "tests/js/bench-isolate.mjs", { conditions: ["browser"], format: "esm", external: ["docauto/webhooks"] });
  writeFileSync(dir + "isolate.mjs", code);
  writeFileSync(dir + "index.html", `<!doctype html><meta charset="utf-8"><title>bench</title>
<script type="importmap">{ "imports": { "docauto/webhooks": "/pkg/webhooks/index.js" } }</script>
<script type="module">
import { runners, loop } from "./isolate.mjs";
const r = runners(${JSON.stringify(isolateInput(input))}, ${NOW});
window.batch = async (impl, n) => { const t0 = performance.now(); await loop(r[impl], n); return n / ((performance.now() - t0) / 1000); };
</script>`);
  const srv = await serveStatic({ "/pkg/": root + "pkg", "/b/": dir });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`${srv.url}/b/index.html`);
    await page.waitForFunction(() => typeof window.batch === "function", null, { timeout: 60_000 });
    return await compareRounds((impl, n) => page.evaluate(([i, k]) => window.batch(i, k), [impl, n]));
  } finally {
    await browser.close();
    await srv.close();
  }
}

/** Median verifications/s of jose, verify, the minimal plain-JS verifier and the bare `crypto.subtle.verify` ceiling
 * over ROUNDS interleaved batches of N (after a warm-up batch each), and the medians of the per-round ratios to jose. */
async function compareRounds(batch) {
  const impls = ["jose", "verify", "minimal", "ceiling"];
  for (const impl of impls) await batch(impl, 500);
  const r = Object.fromEntries(impls.flatMap((i) => [[i, []], [`${i}Ratio`, []]]));
  for (let k = 0; k < ROUNDS; k++) {
    for (const impl of impls) r[impl].push(await batch(impl, N));
    for (const impl of impls) r[`${impl}Ratio`].push(r[impl][k] / r.jose[k]);
  }
  return Object.fromEntries(Object.entries(r).map(([k, xs]) => [k, median(xs)]));
}

/**
 * SHA-256 of a body: the host (node:crypto `hash`, WebCrypto `digest`) vs sha2 in wasm, in microseconds per body.
 * The wasm figure comes from a second instance of the verifier module handed a stub host that answers every
 * signature "valid" at once and has no `hash` (so the body is copied into wasm and hashed by sha2, as in workerd or
 * a browser, and no signature check adds its jitter): the difference between two verifySync calls that both copied
 * the body and fail right after the signature, one on an expired token (before hashing), one on a token whose
 * bodySha256 differs (after hashing), called alternately and timed one by one so that load drifts cancel.
 */
async function hashing(input) {
  const glue = await import(`${pathToFileURL(root + "pkg/webhooks/wasm/docauto.js")}?without-node-crypto`);
  glue.initSync({ module: readFileSync(root + "pkg/webhooks/wasm/docauto-webhooks.wasm") });
  glue.__useNodeCrypto({ createPublicKey, verify: () => true }, true);
  const out = [];
  for (const size of [input.bytes, 64 * 1024, 1024 * 1024]) {
    const body = size === input.bytes ? input.body : `{"pad":"${"x".repeat(size - 10)}"}`;
    const claims = { iss: "svc-process", processingId: "p", eventId: "e", type: "t", iat: NOW - 10, exp: NOW + 290 };
    const mismatch = await input.sign({ ...claims, bodySha256: "A".repeat(43) });
    const expired = await input.sign({ ...claims, bodySha256: "A".repeat(43), iat: NOW - 900, exp: NOW - 600 });
    const v = new glue.WebhookVerifier({ jwks: input.jwks, now: NOW, maxBodyBytes: 2 * 1024 * 1024 });
    const n = Math.max(20, Math.round(2_000_000 / size));
    const alternate = (a, b) => {
      const m = size <= 1024 ? 4000 : Math.max(n, 100);
      for (let i = 0; i < Math.ceil(m / 4); i++) {
        a();
        b();
      }
      let ta = 0;
      let tb = 0;
      for (let i = 0; i < m; i++) {
        const t0 = performance.now();
        a();
        const t1 = performance.now();
        b();
        ta += t1 - t0;
        tb += performance.now() - t1;
      }
      return ((tb - ta) * 1000) / m;
    };
    const per = (fn) => {
      for (let i = 0; i < Math.ceil(n / 4); i++) fn();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) fn();
      return ((performance.now() - t0) * 1000) / n;
    };
    const fails = (token) => () => {
      try {
        v.verifySync(body, token);
      } catch {
        return;
      }
      throw new Error("verifySync accepted a bad token");
    };
    const perAsync = async (fn) => {
      for (let i = 0; i < Math.ceil(n / 4); i++) await fn();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await fn();
      return ((performance.now() - t0) * 1000) / n;
    };
    const enc = new TextEncoder();
    const r = { node: [], subtle: [], wasm: [] };
    for (let k = 0; k < ROUNDS; k++) {
      r.node.push(per(() => nodeHash("sha256", body, "buffer")));
      r.subtle.push(await perAsync(() => crypto.subtle.digest("SHA-256", enc.encode(body))));
      r.wasm.push(alternate(fails(expired), fails(mismatch)));
    }
    out.push({ size, node: median(r.node), subtle: median(r.subtle), wasm: median(r.wasm) });
  }
  return out;
}

const fmt = (n) => Math.round(n).toLocaleString("en-US").replace(/,/g, " ");
const kb = (n) => `${fmt(n)} B (${(n / 1024).toFixed(1)} KiB)`;

async function main() {
  const input = await benchInput();
  const s = await speed(input);
  const h = await hashing(input);
  const iw = await isolateWorkerd(input);
  const ic = await isolateChromium(input);
  const zw = sizes();
  const cn = coldNode(input);
  const cw = await coldWorkerd(input);
  const node = process.version;
  const lines = [
    `Measured by \`cargo xtask bench\` (Node ${node}, ${input.bytes}-byte body, median of ${ROUNDS} interleaved rounds of ${N}; "vs jose" is the median of the per-round ratios).`,
    "",
    "| measure | value | vs jose |",
    "| --- | --- | --- |",
    `| jose \`jwtVerify\` + local key set + node SHA-256 of the body | ${fmt(s.jose)} verifications/s | 1.00 |`,
    `| docauto \`verify\` (node:crypto, one KeyObject per kid) | ${fmt(s.verify)} verifications/s | ${s.verifyRatio.toFixed(2)} |`,
    `| docauto \`verifySync\` (node:crypto, one KeyObject per kid) | ${fmt(s.verifySync)} verifications/s | ${s.verifySyncRatio.toFixed(2)} |`,
    `| CPU time per verification (all threads of the process): jose / \`verify\` / \`verifySync\` | ${s.joseCpu.toFixed(1)} / ${s.verifyCpu.toFixed(1)} / ${s.verifySyncCpu.toFixed(1)} us | ${(s.joseCpu / s.verifyCpu).toFixed(2)} / ${(s.joseCpu / s.verifySyncCpu).toFixed(2)} |`,
    `| workerd (miniflare): jose \`jwtVerify\` + WebCrypto SHA-256, same isolate | ${fmt(iw.jose)} verifications/s | 1.00 |`,
    `| workerd (miniflare): docauto \`verify\` (WebCrypto) | ${fmt(iw.verify)} verifications/s | ${iw.verifyRatio.toFixed(2)} |`,
    `| workerd (miniflare): the same checks in plain JS and nothing else (split, base64url, JSON.parse, \`crypto.subtle.verify\` with the key imported once, WebCrypto SHA-256, envelope-vs-claims) | ${fmt(iw.minimal)} verifications/s | ${iw.minimalRatio.toFixed(2)} |`,
    `| workerd (miniflare): \`crypto.subtle.verify\` alone, inputs prepared before the loop (no parsing, hashing or claims: the ceiling of any WebCrypto verifier) | ${fmt(iw.ceiling)} verifications/s | ${iw.ceilingRatio.toFixed(2)} |`,
    `| Chromium (headless): jose \`jwtVerify\` + WebCrypto SHA-256, same page | ${fmt(ic.jose)} verifications/s | 1.00 |`,
    `| Chromium (headless): docauto \`verify\` (WebCrypto) | ${fmt(ic.verify)} verifications/s | ${ic.verifyRatio.toFixed(2)} |`,
    `| Chromium (headless): the same checks in plain JS and nothing else | ${fmt(ic.minimal)} verifications/s | ${ic.minimalRatio.toFixed(2)} |`,
    `| Chromium (headless): \`crypto.subtle.verify\` alone, inputs prepared before the loop (the ceiling) | ${fmt(ic.ceiling)} verifications/s | ${ic.ceilingRatio.toFixed(2)} |`,
    ...h.map((x) => `| SHA-256 of a ${kb(x.size)} body (Node): node:crypto \`hash\` / WebCrypto \`digest\` / sha2 in wasm (hash only: the copy into wasm comes on top; used where no node:crypto is handed over) | ${x.node.toFixed(1)} / ${x.subtle.toFixed(1)} / ${x.wasm.toFixed(1)} us | |`),
    `| \`docauto/webhooks\` (verifier-only module) raw | ${kb(zw.raw)} | |`,
    `| \`docauto/webhooks\` gzip -9 | ${kb(zw.gzip)} | |`,
    `| \`docauto/webhooks\` brotli q11 | ${kb(zw.brotli)} | |`,
    `| Node cold start: \`import("docauto/webhooks")\` | ${cn.importMs.toFixed(1)} ms | |`,
    `| Node cold start: first \`verify\` (then a second) | ${cn.firstMs.toFixed(1)} ms (${cn.secondMs.toFixed(2)} ms) | |`,
    `| workerd (miniflare) start + first request verifying, with the package | ${cw.withMs.toFixed(0)} ms | |`,
    `| workerd (miniflare) start + first request, same worker without the package | ${cw.withoutMs.toFixed(0)} ms | |`,
  ];
  console.log("<!-- table -->");
  console.log(lines.join("\n"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
