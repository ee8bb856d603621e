// cargo xtask bench: verifications/s of docauto's verify / verifySync vs a jose-based verifier (same process,
// ~745-byte body, median of 5 rounds of 2000), .wasm sizes, cold start in Node and workerd. Prints a markdown table
// after the line `<!-- table -->`.
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from "jose";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { Miniflare } from "miniflare";
import { WebhookVerifier } from "docauto";
import { bundle } from "./bundle.mjs";

const ROUNDS = 5;
const N = 2000;
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
  return { jwks: { keys: [jwk] }, body, token, bytes: Buffer.byteLength(body) };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function rate(fn) {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await fn();
  return N / ((performance.now() - t0) / 1000);
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
  const r = { jose: [], verify: [], verifySync: [] };
  for (let k = 0; k < ROUNDS; k++) {
    r.jose.push(await rate(jose));
    r.verify.push(await rate(ours));
    r.verifySync.push(await rate(sync));
  }
  return { jose: median(r.jose), verify: median(r.verify), verifySync: median(r.verifySync) };
}

function sizes(path = "pkg/wasm/docauto_bg.wasm") {
  const wasm = readFileSync(root + path);
  return {
    raw: wasm.length,
    gzip: gzipSync(wasm, { level: 9 }).length,
    brotli: brotliCompressSync(wasm, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

/** Import + first verify in a fresh Node process (median of 5 processes). */
function coldNode(input, specifier = "docauto") {
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
  mkdirSync(dir + "wasm", { recursive: true });
  writeFileSync(dir + "with.mjs", `import { WebhookVerifier } from "docauto";
export default { async fetch(req, env) {
  const v = new WebhookVerifier({ jwks: JSON.parse(env.JWKS), now: ${NOW} });
  const e = await v.verify(env.BODY, env.TOKEN);
  return new Response(e.eventId);
} };`);
  writeFileSync(dir + "without.mjs", `export default { async fetch(req, env) { return new Response(env.BODY.slice(0, 4)); } };`);
  const { code } = await bundle(dir + "with.mjs", { conditions: ["workerd", "worker", "browser"], format: "esm", external: ["*.wasm"] });
  writeFileSync(dir + "with.bundle.mjs", code);
  copyFileSync(root + "pkg/wasm/docauto_bg.wasm", dir + "wasm/docauto_bg.wasm");
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
    withPkg.push(await once("with.bundle.mjs"));
  }
  return { withMs: median(withPkg), withoutMs: median(without) };
}

const fmt = (n) => Math.round(n).toLocaleString("en-US").replace(/,/g, " ");
const kb = (n) => `${fmt(n)} B (${(n / 1024).toFixed(1)} KiB)`;

async function main() {
  const input = await benchInput();
  const s = await speed(input);
  const z = sizes();
  const zw = sizes("pkg/webhooks/wasm/docauto_bg.wasm");
  const cn = coldNode(input);
  const cnw = coldNode(input, "docauto/webhooks");
  const cw = await coldWorkerd(input);
  const node = process.version;
  const lines = [
    `Measured by \`cargo xtask bench\` (Node ${node}, ${input.bytes}-byte body, median of ${ROUNDS} rounds of ${N}).`,
    "",
    "| measure | value | vs jose |",
    "| --- | --- | --- |",
    `| jose \`jwtVerify\` + local key set + node SHA-256 of the body | ${fmt(s.jose)} verifications/s | 1.00 |`,
    `| docauto \`verify\` (WebCrypto, key imported once per kid) | ${fmt(s.verify)} verifications/s | ${(s.verify / s.jose).toFixed(2)} |`,
    `| docauto \`verifySync\` (p256 in wasm) | ${fmt(s.verifySync)} verifications/s | ${(s.verifySync / s.jose).toFixed(2)} |`,
    `| \`docauto_bg.wasm\` raw | ${kb(z.raw)} | |`,
    `| \`docauto_bg.wasm\` gzip -9 | ${kb(z.gzip)} | |`,
    `| \`docauto_bg.wasm\` brotli q11 | ${kb(z.brotli)} | |`,
    `| \`docauto/webhooks\` (verifier-only module) raw | ${kb(zw.raw)} | |`,
    `| \`docauto/webhooks\` gzip -9 | ${kb(zw.gzip)} | |`,
    `| \`docauto/webhooks\` brotli q11 | ${kb(zw.brotli)} | |`,
    `| Node cold start: \`import("docauto")\` | ${cn.importMs.toFixed(1)} ms | |`,
    `| Node cold start: first \`verify\` (then a second) | ${cn.firstMs.toFixed(1)} ms (${cn.secondMs.toFixed(2)} ms) | |`,
    `| Node cold start: \`import("docauto/webhooks")\`, first \`verify\` | ${cnw.importMs.toFixed(1)} ms, ${cnw.firstMs.toFixed(1)} ms | |`,
    `| workerd (miniflare) start + first request verifying, with the package | ${cw.withMs.toFixed(0)} ms | |`,
    `| workerd (miniflare) start + first request, same worker without the package | ${cw.withoutMs.toFixed(0)} ms | |`,
  ];
  console.log("<!-- table -->");
  console.log(lines.join("\n"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
