// `cargo xtask demo`: starts the emulator (or uses the service named by DOCAUTO_BASE_URL and DOCAUTO_API_KEY),
// registers this demo's /webhooks as a webhook endpoint, serves the demo backend (www/app.mjs) on 127.0.0.1 and
// prints one line with the address to open. Ctrl-C (SIGINT) or SIGTERM stops everything it started.
//
//   node www/dev.mjs [--pkg DIR] [--emulator BIN] [--port N] [--time-scale F]
//
// Defaults: --pkg <repo>/pkg, --emulator <repo>/target/debug/docauto-emulator, --port 8787 (any free port when it is
// taken), --time-scale 0.5. `startDemo(options)` does the same for tests and resolves to `{ url, stop() }`.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createApp } from "./app.mjs";
import { serveNode, diskAssets } from "./node-serve.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const EMULATOR_KEY = "sk_test_docauto";

/** Starts the emulator; resolves to `{ baseUrl, stop() }`. */
export async function startEmulator(bin, { timeScale = 0.5, rateLimit = 300 } = {}) {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`cargo build -p docauto-emulator\``);
  const child = spawn(bin, [
    "--addr", "127.0.0.1:0", "--allow-http-webhooks", "--control",
    "--time-scale", String(timeScale), "--rate-limit", String(rateLimit),
  ], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (c) => {
    err = (err + c).slice(-4000);
  });
  const baseUrl = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error("the emulator did not start within 20 s")), 20_000);
    child.stdout.on("data", (c) => {
      out += c;
      const m = /docauto emulator listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1].replace(/\/$/, ""));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`the emulator exited with ${code}: ${err.trim()}`));
    });
  });
  child.stdout.resume();
  return {
    baseUrl,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await once(child, "exit").catch(() => {});
      clearTimeout(timer);
    },
  };
}

/**
 * Starts the demo. Options: `pkgDir`, `emulatorBin`, `port` (0: any), `timeScale`, `rateLimit`, `env`
 * (default `process.env`: DOCAUTO_BASE_URL + DOCAUTO_API_KEY select a real service; DEMO_PUBLIC_URL is this demo's
 * address as that service can reach it, for webhooks and documents by URL). Resolves to
 * `{ url, baseUrl, controlUrl, webhookEndpointId, stop() }`.
 */
export async function startDemo({
  pkgDir = join(ROOT, "pkg"),
  emulatorBin = process.env.DOCAUTO_EMULATOR ?? join(ROOT, "target", "debug", "docauto-emulator"),
  port = 0,
  timeScale = 0.5,
  rateLimit = 300,
  env = process.env,
} = {}) {
  const entry = join(pkgDir, "node.js");
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`cargo xtask build\``);
  const { DocAuto } = await import(pathToFileURL(entry).href);
  const { WebhookVerifier } = await import(pathToFileURL(join(pkgDir, "webhooks", "node.js")).href);
  const sdk = { DocAuto, WebhookVerifier };
  const external = Boolean(env.DOCAUTO_BASE_URL && env.DOCAUTO_API_KEY);
  const emulator = external ? null : await startEmulator(emulatorBin, { timeScale, rateLimit });
  const baseUrl = external ? env.DOCAUTO_BASE_URL.replace(/\/$/, "") : emulator.baseUrl;
  const apiKey = external ? env.DOCAUTO_API_KEY : EMULATOR_KEY;
  let app = null;
  let server;
  try {
    const handler = { fetch: (request) => (app ? app.fetch(request) : new Response("starting", { status: 503 })) };
    server = await serveNode(handler, { port }).catch((e) => {
      if (port === 0 || e?.code !== "EADDRINUSE") throw e;
      return serveNode(handler, { port: 0 }); // the usual port is taken: any free one
    });
    const publicUrl = external ? env.DEMO_PUBLIC_URL?.replace(/\/$/, "") : server.url;
    const webhookEndpointId = publicUrl ? await registerWebhook({ sdk, baseUrl, apiKey, url: `${publicUrl}/webhooks`, external }) : null;
    app = createApp({
      sdk,
      apiKey,
      baseUrl,
      webhookEndpointId,
      publicUrl,
      controlUrl: emulator ? `${emulator.baseUrl}/__emulator` : null,
      assets: diskAssets({ "/pkg/": pkgDir, "/": join(ROOT, "www", "public") }),
      clientOptions: env.DOCAUTO_LOG ? {} : { logLevel: "off" },
      prefetchKeys: true,
    });
    return {
      url: server.url,
      baseUrl,
      controlUrl: emulator ? `${emulator.baseUrl}/__emulator` : null,
      webhookEndpointId,
      emulator,
      async stop() {
        if (external && webhookEndpointId) {
          await new sdk.DocAuto({ apiKey, baseUrl, logLevel: "off" }).webhooks.delete(webhookEndpointId).catch(() => {});
        }
        await server.close();
        await emulator?.stop();
      },
    };
  } catch (e) {
    await server?.close();
    await emulator?.stop();
    throw e;
  }
}

/**
 * Registers `url` as a saved endpoint for every event type. The emulator's endpoint is `http://` on loopback
 * (allowed there by `--allow-http-webhooks`), which the SDK's pre-flight check refuses (the spec says https only),
 * so that one is registered with a plain request.
 */
async function registerWebhook({ sdk, baseUrl, apiKey, url, external }) {
  if (external) {
    const endpoint = await new sdk.DocAuto({ apiKey, baseUrl, logLevel: "off" }).webhooks.create({ url });
    return endpoint.id;
  }
  const r = await fetch(`${baseUrl}/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ url }),
  });
  if (!r.ok) throw new Error(`webhook endpoint registration: ${r.status} ${await r.text()}`);
  return (await r.json()).id;
}

function parseArgs(argv) {
  const opts = { port: Number(process.env.DEMO_PORT ?? 8787) };
  for (let i = 0; i < argv.length; i++) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (k === "--pkg") opts.pkgDir = v;
    else if (k === "--emulator") opts.emulatorBin = v;
    else if (k === "--port") opts.port = Number(v);
    else if (k === "--time-scale") opts.timeScale = Number(v);
    else throw new Error(`unknown argument ${k} (expected --pkg, --emulator, --port, --time-scale)`);
    i++;
  }
  return opts;
}

/** The command line entry (also used by www/serve.mjs). */
export async function main(argv) {
  let demo;
  try {
    demo = await startDemo(parseArgs(argv));
  } catch (e) {
    console.error(`docauto demo: ${e.message}`);
    process.exit(1);
  }
  const where = demo.emulator ? `emulator ${demo.baseUrl}` : `service ${new URL(demo.baseUrl).host}`;
  console.log(`docauto demo: open ${demo.url}/  (${where}; Ctrl-C stops)`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await demo.stop();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  demo.emulator?.child.once("exit", (code, signal) => {
    // Ctrl-C in a terminal reaches the emulator too (same process group): that is a stop, not a crash.
    if (stopping || code === 0 || signal === "SIGINT" || signal === "SIGTERM") return stop();
    console.error(`docauto demo: the emulator exited (${code ?? signal}); stopping`);
    stopping = true;
    demo.stop().finally(() => process.exit(1));
  });
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  await main(process.argv.slice(2));
}
