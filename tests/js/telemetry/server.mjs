// The scripted API server of the telemetry checks (plain `node:http`, not the emulator): each runtime uses its own
// path prefix (`/<name>`), under which the routes the checks call answer as scripted, counted per prefix. The first
// run creation is read and then dropped without an answer (its answer is lost: the client must resend it).
import { createServer } from "node:http";
import { once } from "node:events";
import { SECRETS } from "./checks.mjs";

/** Starts the server; resolves to `{ url, requests(prefix), close() }`. */
export async function startScriptedServer() {
  const seen = new Map();
  const sockets = new Set();
  let origin = "";
  const json = (res, status, body, headers = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url, origin);
      const [, prefix, ...rest] = url.pathname.split("/");
      const path = "/" + rest.join("/");
      const key = `${prefix} ${req.method} ${path}`;
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const route = `${req.method} ${path}`;
      if (route === "POST /v1/agent-runs") {
        if (n === 1) return req.socket.destroy();
        return json(res, 201, { object: "agent_run", id: "arn_1", status: "queued" }, { "x-request-id": "req_created" });
      }
      if (route === "GET /v1/agent-runs/arn_1") {
        // The first poll: still processing, and the server asks for a pause before the next.
        if (n === 1) return json(res, 200, { object: "agent_run", id: "arn_1", status: "processing" }, { "retry-after-ms": "50" });
        return json(res, 200, { object: "agent_run", id: "arn_1", status: "completed" });
      }
      if (route === "GET /v1/runs/exr_missing") {
        return json(res, 404, { error: { code: "not_found", message: "no such run" } }, { "x-request-id": "req_missing" });
      }
      if (route === "GET /v1/agents") return json(res, 200, { object: "list", data: [], has_more: false });
      if (route === "GET /v1/agents/agt_1") return json(res, 200, { object: "agent", id: "agt_1" });
      if (route === "GET /v1/runs/exr_1/output/out.pdf") {
        res.writeHead(302, { location: `${origin}/${prefix}/signed/out.pdf?sig=${SECRETS.query}` });
        return res.end();
      }
      if (route === "GET /signed/out.pdf") {
        res.writeHead(200, { "content-type": "application/pdf" });
        return res.end(SECRETS.answerMarker);
      }
      if (route === "POST /v1/realtime/transcriptions") {
        return json(res, 201, { object: "realtime_session", id: "rts_1", url: `wss://realtime.example.com/v1/realtime/socket?ticket=${SECRETS.ticket}`, expiresAt: "2030-01-01T00:00:00Z" });
      }
      if (route === "POST /v1/extract") {
        return json(res, 202, { object: "extract_run", id: "exr_2", status: "queued", note: SECRETS.answerMarker });
      }
      json(res, 404, { error: { code: "not_found", message: `not scripted: ${route}` } });
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${server.address().port}`;
  return {
    url: origin,
    /** How many requests `prefix` sent to `method path`. */
    requests: (prefix, method, path) => seen.get(`${prefix} ${method} ${path}`) ?? 0,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
