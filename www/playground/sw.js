// The playground's Service Worker: the page's requests to `api/*` (under this worker's scope) are answered by the
// page that made them, where the demo backend (www/app.mjs's `createApp`) runs over an in-process emulator (see
// playground.js). The worker holds no state: the backend lives as long as its page, so nothing is lost when a browser
// stops an idle worker.
//
// Protocol (one MessageChannel per request): the worker posts `{ type: "docauto-playground-request", method, url,
// headers, body, whole: true }` with a port to the page; the page answers a finite response whole, in one message
// (`{ head: { status, headers }, body: ArrayBuffer }`), which the worker answers with a complete body. Only an event
// stream is streamed: `{ head }`, then `{ chunk: Uint8Array }`s and `{ end: true }` (or `{ error }`); the worker posts
// `{ cancel: true }` when the page's reader goes away (an EventSource closed). The page's own event stream does not
// come here (playground.js reads it from the backend in the page): Firefox reports a streamed response that its page
// stops reading, at a reload for one, as an error of the page ("A ServiceWorker intercepted the request and
// encountered an unexpected error"), however the worker ends it.

const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const ANSWER_WITHIN_MS = 30_000;

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
// A page loaded without a controller (a hard reload) asks to be claimed.
self.addEventListener("message", (event) => {
  if (event.data?.type === "docauto-playground-claim") event.waitUntil(self.clients.claim());
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  const scope = new URL(self.registration.scope);
  if (url.origin !== scope.origin || !url.pathname.startsWith(`${scope.pathname}api/`)) return;
  event.respondWith(forward(event.request, event.clientId));
});

function failure(status, code, message) {
  return new Response(JSON.stringify({ error: { code, message, status } }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

async function forward(request, clientId) {
  const client = clientId ? await self.clients.get(clientId) : undefined;
  if (!client) return failure(503, "backend_unreachable", "the page that runs the playground's backend is gone");
  const body = request.method === "GET" || request.method === "HEAD" ? null : await request.arrayBuffer();
  const headers = [...request.headers];
  const channel = new MessageChannel();
  const port = channel.port1;
  let headOf;
  const head = new Promise((resolve) => {
    headOf = resolve;
  });
  let stream;
  const queued = [];
  port.onmessage = ({ data }) => {
    if (data.head) return headOf(data);
    if (!stream) return queued.push(data);
    feed(stream, data);
  };
  const timer = setTimeout(() => headOf(null), ANSWER_WITHIN_MS);
  const message = { type: "docauto-playground-request", method: request.method, url: request.url, headers, body, whole: true };
  client.postMessage(message, [channel.port2]);
  const first = await head;
  clearTimeout(timer);
  if (!first) {
    port.close();
    return failure(504, "backend_timeout", "the playground's backend did not answer");
  }
  const answer = first.head;
  const empty = NULL_BODY.has(answer.status) || request.method === "HEAD";
  if (first.body || empty) {
    if (!first.body) port.postMessage({ cancel: true });
    port.close();
    return new Response(empty ? null : first.body, { status: answer.status, headers: answer.headers });
  }
  const readable = new ReadableStream({
    start(controller) {
      stream = controller;
      for (const data of queued.splice(0)) feed(controller, data);
    },
    cancel() {
      port.postMessage({ cancel: true });
      port.close();
    },
  });
  return new Response(readable, { status: answer.status, headers: answer.headers });

  function feed(controller, data) {
    try {
      if (data.chunk) controller.enqueue(data.chunk);
      else if (data.end) {
        controller.close();
        port.close();
      } else if (data.error) {
        controller.error(new Error(data.error));
        port.close();
      }
    } catch {
      // the reader went away: nothing to feed
    }
  }
}
