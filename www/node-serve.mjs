// Runs a Fetch-API handler (`{ fetch(request) }`) on Node's http server: IncomingMessage -> Request -> handler ->
// Response, streaming both bodies (the Server-Sent Events stream stays open). Plus `diskAssets`, a `{ fetch }`
// serving files from folders (the shape of a workerd ASSETS binding).
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { readFile } from "node:fs/promises";
import { extname, resolve, sep } from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".ts": "text/plain; charset=utf-8",
};

/** Serves `handler` on `host:port` (port 0: any free one); resolves to `{ url, close() }`. */
export async function serveNode(handler, { host = "127.0.0.1", port = 0 } = {}) {
  const server = createServer(async (req, res) => {
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    try {
      const url = `http://${req.headers.host ?? host}${req.url}`;
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const request = new Request(url, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
        body: hasBody ? Readable.toWeb(req) : undefined,
        duplex: hasBody ? "half" : undefined,
        signal: abort.signal,
      });
      const response = await handler.fetch(request);
      const headers = {};
      response.headers.forEach((v, k) => {
        headers[k] = v;
      });
      res.writeHead(response.status, headers);
      if (!response.body || req.method === "HEAD") {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      abort.signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise((r) => res.once("drain", r));
      }
      res.end();
    } catch (err) {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "internal_error", message: String(err?.message ?? err) } }));
      } else {
        res.destroy();
      }
    }
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, ok);
  });
  return {
    url: `http://${host}:${server.address().port}`,
    close() {
      server.closeAllConnections?.();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** `{ fetch(request) }` over `mounts` (`{ "/url-prefix/": "/abs/dir" }`); `..` cannot leave a mount. */
export function diskAssets(mounts) {
  const roots = Object.entries(mounts).map(([prefix, dir]) => [prefix, resolve(dir)]);
  return {
    async fetch(request) {
      const path = decodeURIComponent(new URL(request.url).pathname);
      const mount = roots.find(([prefix]) => path.startsWith(prefix));
      if (!mount) return new Response("not found", { status: 404 });
      const [prefix, dir] = mount;
      const file = resolve(dir, path.slice(prefix.length).replace(/^[/\\]+/, ""));
      if (!file.startsWith(dir + sep)) return new Response("not found", { status: 404 });
      try {
        const data = await readFile(file);
        return new Response(data, {
          headers: { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" },
        });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  };
}
