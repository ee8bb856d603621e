// The demo backend: ONE Fetch-API handler (`Request` in, `Response` out) with no runtime-specific import, so Node
// (www/node-serve.mjs), Deno, Bun and workerd run it unchanged (see www/README.md).
//
// It holds the API key and uses the SDK server-side: it proxies the page's actions, mints realtime sessions,
// receives the service's webhooks at /webhooks (verified with WebhookVerifier against the service's key set) and
// relays every delivery, verified or rejected with its reason code, to the page over Server-Sent Events. The page
// never sees the key: nothing the handler answers carries it, and no route forwards a header from the page upstream.
import { SAMPLES, sampleBytes } from "./samples.mjs";

const HISTORY = 200; // deliveries kept for pages that connect later
const RUNS_KEPT = 20; // agent runs the inbox lists again after a reload
const BODY_KEPT = 64 * 1024; // bytes of a delivery's body kept for the inspector
const MAX_DELIVERY = 1024 * 1024; // larger deliveries are refused (413) before reading

/**
 * Builds the handler.
 * - `sdk`: `{ DocAuto, WebhookVerifier }`, from the `docauto` and `docauto/webhooks` entries.
 * - `apiKey`, `baseUrl`: the service.
 * - `webhookEndpointId`: the saved endpoint that points at this handler's /webhooks (runs reference it); optional.
 * - `publicUrl`: this handler's address as the service can reach it; with it, sample documents go by URL
 *   (`{url}`), without it they are uploaded once (`files.upload`) and referenced by id.
 * - `controlUrl`: the emulator's `/__emulator` address when the emulator runs with `--control` (the page's
 *   "Simulate" menu); optional.
 * - `assets`: `{ fetch(request) }` serving the page (`/`, `/index.html`, `/app/*`) and `/pkg/*` (a workerd ASSETS
 *   binding has this shape; www/node-serve.mjs gives one reading from disk).
 * - `clientOptions`: extra options of `new DocAuto` (for example `logLevel`).
 * - `prefetchKeys`: fetch the webhook key set at once (long-lived servers; see below).
 * - `fetch`: the `fetch` the service (API, key set, control API) is reached with; default the runtime's. The static
 *   playground passes its in-process emulator's.
 * - `saved`: what `saved()` returned before (`{ runs, deliveries }`): the runs this backend started and the
 *   deliveries it received, for a backend that does not outlive its page (the playground keeps it in storage).
 */
export function createApp({
  sdk, apiKey, baseUrl, webhookEndpointId, publicUrl, controlUrl, assets, clientOptions = {}, prefetchKeys = false,
  fetch = globalThis.fetch, saved,
}) {
  const reach = fetch === globalThis.fetch ? {} : { fetch };
  const client = new sdk.DocAuto({ apiKey, baseUrl, maxRetryAfterMs: 2000, ...reach, ...clientOptions });
  const verifier = new sdk.WebhookVerifier({ baseUrl, dedupe: true, ...reach });
  // With `prefetchKeys`, the key set is fetched before the first delivery: two deliveries arriving while the first
  // fetch was still in flight made the second fail with `jwks_unavailable` (seen with the emulator's back-to-back
  // agent-run events). Off by default: workerd does not let one request wait on I/O started by another.
  let keysReady = prefetchKeys ? verifier.refreshKeys().catch(() => {}) : Promise.resolve();
  const deliveries = Array.isArray(saved?.deliveries) ? saved.deliveries.slice(-HISTORY) : [];
  const listeners = new Set();
  const uploaded = new Map(); // sample id -> promise of a file id (upload mode)
  // the agent runs started here, oldest first: the inbox lists them again after a reload (the API lists no agent runs)
  const runs = Array.isArray(saved?.runs) ? saved.runs.filter((id) => typeof id === "string").slice(-RUNS_KEPT) : [];
  let seq = deliveries.reduce((max, d) => Math.max(max, Number(d?.seq) || 0), 0);

  const publish = (record) => {
    deliveries.push(record);
    if (deliveries.length > HISTORY) deliveries.shift();
    const frame = sse("delivery", record);
    for (const send of listeners) send(frame);
  };

  async function fileRef(doc) {
    if (doc && typeof doc.url === "string" && doc.url) return { url: doc.url };
    const sample = SAMPLES.find((s) => s.id === doc?.sample);
    if (!sample) throw httpError(400, "invalid_request", "document: pick a sample or give a URL");
    if (publicUrl) return { url: `${publicUrl}/samples/${sample.file}`, name: sample.file };
    if (!uploaded.has(sample.id)) {
      const p = client.files
        .upload({ name: sample.file, mimeType: sample.type.split(";")[0], data: sampleBytes(sample) })
        .then((f) => f.id);
      p.catch(() => uploaded.delete(sample.id));
      uploaded.set(sample.id, p);
    }
    return { id: await uploaded.get(sample.id) };
  }

  async function receiveWebhook(request) {
    if (Number(request.headers.get("content-length") ?? 0) > MAX_DELIVERY) {
      return Response.json({ error: "payload_too_large" }, { status: 413 });
    }
    const raw = new Uint8Array(await request.arrayBuffer());
    const header = request.headers.get("x-svc-signature") ?? "";
    const text = new TextDecoder().decode(raw);
    const base = {
      seq: ++seq,
      receivedAt: new Date().toISOString(),
      header,
      body: text.length > BODY_KEPT ? text.slice(0, BODY_KEPT) : text,
    };
    await keysReady;
    keysReady = Promise.resolve();
    try {
      const event = await verifier.verify(raw, header);
      publish({
        ...base, verified: true, duplicate: Boolean(event.duplicate), eventId: event.eventId, type: event.type,
        processingId: event.processingId, status: event.data?.status ?? null,
      });
      // A copy that arrives while the first is still being handled gets 409, so the service delivers it again
      // later (a 2xx would count as delivered, and the event would be lost if the first handler failed).
      if (event.duplicate && event.inProgress) return Response.json({ error: "in_progress" }, { status: 409 });
      if (!event.duplicate) await verifier.markProcessed(event);
      return Response.json({ received: event.eventId });
    } catch (err) {
      if (err?.name !== "WebhookVerificationError") throw err;
      let claimed = {};
      try {
        claimed = JSON.parse(text);
      } catch {
        // not JSON: nothing to show beyond the code
      }
      publish({
        ...base, verified: false, code: err.code, message: err.message, eventId: str(claimed.eventId),
        type: str(claimed.type), processingId: str(claimed.processingId), status: str(claimed.data?.status),
      });
      return Response.json({ error: err.code }, { status: 400 });
    }
  }

  function events() {
    let send;
    let timer;
    const stream = new ReadableStream({
      start(controller) {
        const enc = new TextEncoder();
        send = (frame) => {
          try {
            controller.enqueue(enc.encode(frame));
          } catch {
            listeners.delete(send);
          }
        };
        send("retry: 2000\n\n");
        for (const d of deliveries) send(sse("delivery", d));
        listeners.add(send);
        timer = setInterval(() => send(": keep-alive\n\n"), 15_000);
      },
      cancel() {
        listeners.delete(send);
        clearInterval(timer);
      },
    });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" },
    });
  }

  /** The runs started here, newest first, as the service has them now (a purged one is forgotten). */
  async function knownRuns() {
    const found = await Promise.all(runs.slice().reverse().map((id) => client.agentRuns.retrieve(id).catch((err) => {
      if (err?.status === 404) {
        runs.splice(runs.indexOf(id), 1);
        return null;
      }
      throw err;
    })));
    return { data: found.filter(Boolean) };
  }

  async function control(path, body) {
    if (!controlUrl) throw httpError(404, "not_found", "the emulator's control API is not available");
    const r = await fetch(`${controlUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw httpError(502, "control_failed", `emulator control ${path}: ${r.status}`);
    return r.json().catch(() => ({}));
  }

  const routes = [
    ["GET", /^\/api\/config$/, () => ({
      mode: controlUrl ? "emulator" : "service",
      service: new URL(baseUrl).host,
      webhooks: Boolean(webhookEndpointId),
      control: Boolean(controlUrl),
      samples: SAMPLES.map(({ id, file, title, description, text, schema }) => ({ id, file, title, description, text, schema })),
    })],
    ["GET", /^\/api\/agents$/, () => client.agents.list()],
    ["GET", /^\/api\/agent-runs$/, () => knownRuns()],
    ["POST", /^\/api\/agent-runs$/, async (_m, b) => {
      const files = await Promise.all((b.documents ?? []).map(fileRef));
      const params = { agent: b.agent, files, metadata: { source: "docauto-demo" } };
      if (webhookEndpointId) params.webhook = { id: webhookEndpointId };
      const { data, response } = await client.agentRuns.create(params, { wait: 0 }).withResponse();
      runs.push(data.id);
      if (runs.length > RUNS_KEPT) runs.shift();
      return { httpStatus: response.status, run: data };
    }],
    ["GET", /^\/api\/agent-runs\/([\w-]+)$/, (m, _b, url) =>
      client.agentRuns.retrieve(m[1], { wait: clampWait(url.searchParams.get("wait")) })],
    ["POST", /^\/api\/agent-runs\/([\w-]+)\/approvals\/([\w-]+)$/, (m, b) =>
      b.decision === "reject"
        ? client.agentRuns.reject(m[1], m[2], { note: b.note ?? "" })
        : client.agentRuns.approve(m[1], m[2], b.note ? { note: b.note } : {})],
    ["POST", /^\/api\/agent-runs\/([\w-]+)\/tasks\/([\w-]+)\/complete$/, (m, b) =>
      client.agentRuns.completeTask(m[1], m[2], b.note ? { note: b.note } : {})],
    ["POST", /^\/api\/(extract|parse|redact)$/, async (m, b) => {
      const file = await fileRef(b.document);
      const body = { file, metadata: { source: "docauto-demo" } };
      if (m[1] === "extract") Object.assign(body, { schema: b.schema, citations: true });
      if (m[1] === "redact") Object.assign(body, { categories: b.categories, mode: b.mode });
      const { data, response } = await client[m[1]](body, { wait: 0 }).withResponse();
      return { httpStatus: response.status, run: data };
    }],
    ["GET", /^\/api\/runs\/([\w-]+)\/wait$/, async (m) => {
      const run = await client.runs.waitFor(m[1]);
      const file = run.status === "processed" ? run.output?.file : undefined;
      if (file?.name) {
        const bytes = await client.runs.downloadOutput(m[1], file.name);
        return { run, outputText: new TextDecoder().decode(bytes) };
      }
      return { run };
    }],
    ["POST", /^\/api\/realtime\/session$/, async () => {
      const s = await client.realtime.createSession({});
      return { id: s.id, url: s.url, sampleRate: s.sampleRate, expiresAt: s.expiresAt };
    }],
    ["GET", /^\/api\/jwks$/, () => client.webhooks.jwks()],
    ["POST", /^\/api\/simulate\/rate-limit$/, () => control("/faults", { kind: "rate_limited", retryAfter: 60 })],
    ["POST", /^\/api\/simulate\/credits$/, (_m, b) =>
      control("/credits", { org: "org_demo", exhausted: Boolean(b.exhausted) })],
    ["POST", /^\/api\/simulate\/clock$/, (_m, b) => control("/clock/advance", { seconds: Number(b.seconds) || 0 })],
  ];

  async function api(request, url) {
    let pathKnown = false;
    for (const [method, re, fn] of routes) {
      const m = re.exec(url.pathname);
      if (!m) continue;
      pathKnown = true;
      if (request.method !== method) continue;
      let body = {};
      if (method === "POST") body = await request.json().catch(() => ({}));
      try {
        const out = await fn(m, body, url);
        const status = out?.httpStatus ?? 200;
        if (out && "httpStatus" in out) delete out.httpStatus;
        return Response.json(out ?? null, { status, headers: { "cache-control": "no-store" } });
      } catch (err) {
        return errorResponse(err);
      }
    }
    if (pathKnown) return errorResponse(httpError(405, "method_not_allowed", request.method));
    return errorResponse(httpError(404, "not_found", url.pathname));
  }

  return {
    /** What a later `createApp({ saved })` starts from: the runs started here and the deliveries received. */
    saved() {
      return { runs: runs.slice(), deliveries: deliveries.slice() };
    },
    /** The Fetch-API entry point. */
    async fetch(request) {
      const url = new URL(request.url);
      const path = url.pathname;
      if (path === "/webhooks" && request.method === "POST") return receiveWebhook(request);
      if (path === "/api/events" && request.method === "GET") return events();
      if (path.startsWith("/api/")) return api(request, url);
      const sample = SAMPLES.find((s) => path === `/samples/${s.file}`);
      if (sample) {
        const bytes = sampleBytes(sample);
        return new Response(bytes, {
          headers: { "content-type": sample.type, "content-length": String(bytes.length), "cache-control": "no-store" },
        });
      }
      if (request.method !== "GET" && request.method !== "HEAD") return new Response("not found", { status: 404 });
      const asset = path === "/" ? new Request(new URL("/index.html", url), request) : request;
      return assets ? assets.fetch(asset) : new Response("not found", { status: 404 });
    },
  };
}

function sse(event, data) {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function str(v) {
  return typeof v === "string" ? v : null;
}

function clampWait(v) {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? Math.max(0, Math.min(20, Math.floor(n))) : 0;
}

function httpError(status, code, message) {
  return Object.assign(new Error(message), { status, code });
}

/** An SDK error (or one of ours) as `{ error: { code, message, status, retryAfter, requestId, docUrl } }`. */
function errorResponse(err) {
  const status = Number.isInteger(err?.status) ? err.status : 502;
  const error = {
    code: typeof err?.code === "string" ? err.code : "internal_error",
    message: String(err?.message ?? err),
    status: err?.status ?? null,
    retryAfter: err?.retryAfter ?? null,
    requestId: err?.requestId ?? null,
    docUrl: err?.docUrl ?? null,
  };
  return Response.json({ error }, { status, headers: { "cache-control": "no-store" } });
}
