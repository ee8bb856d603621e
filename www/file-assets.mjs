// An ASSETS-shaped `{ fetch(request) }` over files, for Deno and Bun (their `fetch` reads `file:` URLs): the page
// from www/public/, `/pkg/*` from the package folder. workerd has its own ASSETS binding; Node uses diskAssets.
const TYPES = { html: "text/html; charset=utf-8", js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8",
  wasm: "application/wasm", json: "application/json", ts: "text/plain; charset=utf-8" };

/** Serves `/pkg/…` from `pkgUrl` and everything else from `publicUrl` (both `file:` URLs ending in `/`). */
export function fileAssets(publicUrl, pkgUrl) {
  return {
    async fetch(request) {
      const path = decodeURIComponent(new URL(request.url).pathname);
      if (path.includes("..")) return new Response("not found", { status: 404 });
      const url = path.startsWith("/pkg/") ? new URL(path.slice(5), pkgUrl) : new URL(path.slice(1), publicUrl);
      try {
        const r = await fetch(url);
        if (!r.ok) return new Response("not found", { status: 404 });
        const type = TYPES[path.split(".").pop()] ?? "application/octet-stream";
        return new Response(r.body, { headers: { "content-type": type, "cache-control": "no-store" } });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  };
}
