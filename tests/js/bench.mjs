// cargo xtask bench: verifications/s of docauto's verify / verifySync vs a jose-based verifier (same process,
// ~745-byte body, median of 9 interleaved rounds of 1000, ratios per round) in Node, and of verify / verifySync vs
// jose in workerd (miniflare) and headless Chromium (jose in the same isolate); SHA-256 of a body by the host vs sha2
// in wasm. Prints a `BENCH {...}` line, then a markdown table between `<!-- table -->` and `<!-- /table -->`.
// Module sizes and cold starts are measured by size-bench.mjs and cold-start.mjs.
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from "jose";
import { createHash, createPublicKey, hash as nodeHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Miniflare } from "miniflare";
import { WebhookVerifier } from "docauto/webhooks";
import { bundle, writeWorker } from "./bundle.mjs";
import { serveStatic } from "../../www/static.mjs";
import { launchChromium } from "./chromium.mjs";
import { median } from "./common.mjs";

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

/** The isolate's verifiers over `input` without its signing function (it does not cross into the isolate). */
const isolateInput = ({ jwks, body, token }) => ({ jwks, body, token });

/** verify and verifySync vs jose inside one workerd isolate (miniflare); each batch of N is timed from outside, since workerd's
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

/** verify and verifySync vs jose in one headless Chromium page (the package's browser entry, jose bundled for the browser). */
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
    const rates = await compareRounds((impl, n) => page.evaluate(([i, k]) => window.batch(i, k), [impl, n]));
    return { ...rates, version: browser.version() };
  } finally {
    await browser.close();
    await srv.close();
  }
}

/** Median verifications/s of jose, verify, verifySync, the minimal plain-JS verifier and the bare
 * `crypto.subtle.verify` ceiling over ROUNDS interleaved batches (after a warm-up batch each), and the medians of the
 * per-round ratios to jose. `verifySync` runs p256 in wasm here (no host crypto answers synchronously in an isolate),
 * several times slower than WebCrypto: its batches are a quarter of N, so a round takes about as long for each. */
async function compareRounds(batch) {
  const impls = ["jose", "verify", "verifySync", "minimal", "ceiling"];
  const size = (impl) => (impl === "verifySync" ? N / 4 : N);
  for (const impl of impls) await batch(impl, size(impl) / 2);
  const r = Object.fromEntries(impls.flatMap((i) => [[i, []], [`${i}Ratio`, []]]));
  for (let k = 0; k < ROUNDS; k++) {
    for (const impl of impls) r[impl].push(await batch(impl, size(impl)));
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
  const per = (rates, impl, label) =>
    `| ${label} | ${fmt(rates[impl])} verifications/s | ${impl === "jose" ? "1.00" : rates[`${impl}Ratio`].toFixed(2)} |`;
  const lines = [
    `\`node tests/js/bench.mjs\`: Node ${process.version}, Chromium ${ic.version}, jose ${JSON.parse(readFileSync(root + "node_modules/jose/package.json", "utf8")).version}; a ${input.bytes}-byte delivery; median of ${ROUNDS} interleaved rounds of ${N} (\`verifySync\` in workerd and Chromium: of ${N / 4}); "vs jose" is the median of the per-round ratios, so it can differ from the quotient of the two medians.`,
    "",
    "| measure | value | vs jose |",
    "| --- | --- | --- |",
    per(s, "jose", "Node: jose `jwtVerify` + local key set + node SHA-256 of the body"),
    per(s, "verify", "Node: docauto `verify` (node:crypto)"),
    per(s, "verifySync", "Node: docauto `verifySync` (node:crypto)"),
    `| Node: CPU time per verification (all threads of the process): jose / \`verify\` / \`verifySync\` | ${s.joseCpu.toFixed(1)} / ${s.verifyCpu.toFixed(1)} / ${s.verifySyncCpu.toFixed(1)} us | ${(s.joseCpu / s.verifyCpu).toFixed(2)} / ${(s.joseCpu / s.verifySyncCpu).toFixed(2)} |`,
    per(iw, "jose", "workerd (miniflare): jose `jwtVerify` + WebCrypto SHA-256, same isolate"),
    per(iw, "verify", "workerd (miniflare): docauto `verify` (WebCrypto)"),
    per(iw, "verifySync", "workerd (miniflare): docauto `verifySync` (p256 in wasm)"),
    per(iw, "minimal", "workerd (miniflare): the same checks in plain JS and nothing else (split, base64url, JSON.parse, `crypto.subtle.verify` with the key imported once, WebCrypto SHA-256, envelope against claims)"),
    per(iw, "ceiling", "workerd (miniflare): `crypto.subtle.verify` alone, inputs prepared before the loop (no parsing, hashing or claims: the ceiling of any WebCrypto verifier)"),
    per(ic, "jose", "Chromium (headless): jose `jwtVerify` + WebCrypto SHA-256, same page"),
    per(ic, "verify", "Chromium (headless): docauto `verify` (WebCrypto)"),
    per(ic, "verifySync", "Chromium (headless): docauto `verifySync` (p256 in wasm)"),
    per(ic, "minimal", "Chromium (headless): the same checks in plain JS and nothing else"),
    per(ic, "ceiling", "Chromium (headless): `crypto.subtle.verify` alone, inputs prepared before the loop (the ceiling)"),
    ...h.map((x) => `| SHA-256 of a ${kb(x.size)} body (Node): node:crypto \`hash\` / WebCrypto \`digest\` / sha2 in wasm (hash only: the copy into wasm comes on top; used where no node:crypto is handed over) | ${x.node.toFixed(1)} / ${x.subtle.toFixed(1)} / ${x.wasm.toFixed(1)} us | |`),
  ];
  const { version: chromium, ...chromiumRates } = ic;
  console.log(`BENCH ${JSON.stringify({ bench: "verify", bodyBytes: input.bytes, node: s, workerd: iw, chromium: chromiumRates, chromiumVersion: chromium })}`);
  console.log("<!-- table -->");
  console.log(lines.join("\n"));
  console.log("<!-- /table -->");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
