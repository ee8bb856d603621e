// A local webhook receiver (node:http, in Node, Deno and Bun): records every POST's body and `x-svc-signature`,
// answers 200; `GET /hits` lists them. CORS is open, so a page (Chromium) can both deliver to it and read it.
import { createServer } from "node:http";

export async function startReceiver() {
  const hits = [];
  const server = createServer((req, res) => {
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-allow-headers", "*");
    res.setHeader("access-control-allow-methods", "GET, POST");
    if (req.method === "OPTIONS") return res.writeHead(204).end();
    if (req.method === "GET") return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(hits));
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      hits.push({ body: Buffer.concat(chunks).toString("utf8"), signature: req.headers["x-svc-signature"] });
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: `${base}/hook`,
    base,
    hits: async () => hits,
    // idle keep-alive connections from the deliveries end too (Deno's node:http waits for them in close())
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections?.();
      }),
  };
}
