// A tiny static file server bound to 127.0.0.1, used by `cargo xtask demo` and by the Chromium tests.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, normalize, resolve, sep } from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".ts": "text/plain; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".pdf": "application/pdf",
};

/**
 * Serves `mounts` ({ "/url-prefix/": "/abs/dir" }) on 127.0.0.1:`port` (0 picks a free port).
 * Only files under a mount are served (a path ending in `/`: its index.html); `..` cannot escape it. `html`, when
 * given, rewrites the text of each HTML page before it is sent. Resolves to { url, close }.
 */
export async function serveStatic(mounts, { port = 0, index = "/", html } = {}) {
  const roots = Object.entries(mounts).map(([prefix, dir]) => [prefix, resolve(dir)]);
  const server = createServer(async (req, res) => {
    try {
      let path = decodeURIComponent(new URL(req.url, "http://x").pathname);
      if (path === "/") path = index;
      // a folder's index.html, as every static host serves it (the playground under /docauto/)
      if (path.endsWith("/")) path += "index.html";
      const mount = roots.find(([prefix]) => path.startsWith(prefix));
      if (!mount || (req.method !== "GET" && req.method !== "HEAD")) throw Object.assign(new Error("not found"), { status: 404 });
      const [prefix, dir] = mount;
      const file = resolve(dir, normalize(path.slice(prefix.length)).replace(/^([/\\])+/, ""));
      if (file !== dir && !file.startsWith(dir + sep)) throw Object.assign(new Error("no"), { status: 404 });
      let data = await readFile(file);
      if (html && extname(file) === ".html") data = html(data.toString("utf8"));
      res.writeHead(200, {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        "cache-control": "no-store",
      });
      res.end(data);
    } catch (e) {
      res.writeHead(e.status ?? 404, { "content-type": "text/plain" });
      res.end("not found");
    }
  });
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    close: () => {
      server.closeAllConnections?.();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
