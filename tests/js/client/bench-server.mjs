// The local server and the 20 KB schema of the client's benchmarks (bench.mjs, phases.mjs).
import { spawn } from "node:child_process";

/** A ~20 KB extraction schema in the dialect (flat properties with descriptions), in a non-alphabetical order. */
export function schema20k() {
  const properties = {};
  for (let i = 0; JSON.stringify({ type: "object", properties }).length < 20_000; i++) {
    properties[`field_${(i * 7919) % 1000}_${i}`] = {
      type: i % 3 === 0 ? ["number", "null"] : "string",
      description: `The value printed next to label ${i} on the first page of the invoice, as written.`,
    };
  }
  return { type: "object", properties };
}

/**
 * The server (a child process): `GET /v1/runs/exr_get` a finished run; `POST /v1/extract/configs` the saved config
 * (the body read and parsed, as a server does); `GET /v1/runs/<other id>` the n-th poll of that run `queued`,
 * `processing`, then `processed`; `GET /v1/runs?cursor=` `pageCount` pages of `itemsPerPage` runs. Resolves to `{ url, stop() }`.
 */
export async function startBenchServer(pageCount, itemsPerPage) {
  const code = `
    const { createServer } = require("node:http");
    const PAGES = ${pageCount}, ITEMS = ${itemsPerPage};
    const run = (id, status) => ({
      object: "extract_run", id, status, created_at: "2026-11-20T10:00:00.000Z",
      completed_at: status === "processed" ? "2026-11-20T10:00:04.250Z" : null,
      metadata: { batch: "b-2026-11", source: "bench" }, usage: { pages: 3, credits: 3 },
    });
    const pages = [];
    for (let p = 0; p < PAGES; p++) {
      const data = [];
      for (let i = 0; i < ITEMS; i++) data.push(run("exr_p" + p + "_" + i, "processed"));
      pages.push(JSON.stringify({ object: "list", data, has_more: p + 1 < PAGES, cursor: p + 1 < PAGES ? "c" + (p + 1) : null }));
    }
    const done = JSON.stringify(run("exr_get", "processed"));
    const seen = new Map();
    const statuses = ["queued", "processing", "processed"];
    let configs = 0;
    const send = (res, status, body) => {
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-request-id": "req_bench" });
      res.end(body);
    };
    const server = createServer((req, res) => {
      const url = new URL(req.url, "http://x");
      if (req.method === "POST") {
        const chunks = [];
        req.on("data", (c) => chunks.push(c));
        req.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          if (!req.headers["idempotency-key"]) return send(res, 400, JSON.stringify({ code: "invalid_request", message: "no key" }));
          send(res, 201, JSON.stringify({ object: "extract_config", id: "cfg_" + configs++, name: body.name }));
        });
        return;
      }
      if (url.pathname === "/v1/runs") {
        const p = Number((url.searchParams.get("cursor") ?? "c0").slice(1));
        return send(res, 200, pages[p]);
      }
      const id = url.pathname.split("/").pop();
      if (id === "exr_get") return send(res, 200, done);
      const n = seen.get(id) ?? 0;
      seen.set(id, n + 1);
      send(res, 200, JSON.stringify(run(id, statuses[Math.min(n, 2)])));
    });
    server.keepAliveTimeout = 60_000;
    server.listen(0, "127.0.0.1", () => console.log("port " + server.address().port));
  `;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      const m = /port (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", (c) => reject(new Error(`bench server exited ${c}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}
