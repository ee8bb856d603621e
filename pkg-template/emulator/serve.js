// The emulator on a socket (startEmulator, and the docauto-emulator command): each runtime's own server with its
// WebSocket, in front of the in-process handler of ./core.js. Node has no WebSocket server: `ws` (the well-kept
// one) takes the upgrade there; Deno upgrades with Deno.upgradeWebSocket, Bun with Bun.serve's own.

import { MAX_REQUEST_BYTES, emulatorError, start } from "./core.js";

const SOCKET_PATH = "/v1/realtime/socket";

function cannotBind(e) {
  return emulatorError("cannot_bind", `cannot bind: ${e?.message ?? e}`);
}

function origin(hostname, port) {
  return `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
}

/** A request body of at most MAX_REQUEST_BYTES (more is cut there: the emulator then answers 413). */
async function capped(request) {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= MAX_REQUEST_BYTES) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const out = new Uint8Array(Math.min(size, MAX_REQUEST_BYTES));
  let at = 0;
  for (const c of chunks) {
    const part = c.subarray(0, out.byteLength - at);
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/**
 * A response whose body fails at once: the server sends the head, then cuts the connection without a complete
 * answer (the drop_connection fault, as the native server does it).
 */
function cut() {
  return new Response(
    new ReadableStream({
      start(c) {
        c.error(new Error("the emulator dropped the connection (fault drop_connection)"));
      },
    }),
    { status: 200, headers: { "content-type": "application/json", "x-emulator-fault": "drop" } },
  );
}

/** Serves a web `Request` (Deno, Bun); `null` when the emulator cut the answer (the caller drops the connection). */
async function answer(s, request) {
  const url = new URL(request.url);
  const headers = [];
  request.headers.forEach((v, k) => headers.push(k, v));
  let parts;
  try {
    parts = await s.handle(request.method, url.href, headers, await capped(request));
  } catch (e) {
    if (e instanceof TypeError) return null;
    return new Response(JSON.stringify({ code: e?.code ?? "internal_error", message: String(e?.message ?? e) }), {
      status: 503,
      headers: { "content-type": "application/json" },
    });
  }
  const [status, h, body] = parts;
  const pairs = [];
  for (let i = 0; i + 1 < h.length; i += 2) pairs.push([h[i], h[i + 1]]);
  const empty = status === 204 || status === 304 || request.method === "HEAD";
  return new Response(empty ? null : body, { status, headers: pairs });
}

/**
 * Connects a WebSocket the server upgraded to the emulator's socket protocol. `peer` is
 * `{ send(text), close(code, reason) }`; the returned functions take the peer's frames.
 */
function attach(s, search, peer) {
  let key;
  try {
    key = s.emu.socket(search.startsWith("?") ? search.slice(1) : search, peer.send, peer.close);
  } catch {
    peer.close(1011, "emulator_closed");
    return undefined;
  }
  return {
    text: (t) => s.closed || s.emu.socketText(key, t),
    binary: (b) => s.closed || s.emu.socketBinary(key, b),
    control: () => s.closed || s.emu.socketControl(key),
    closed: () => s.closed || s.emu.socketClosed(key),
  };
}

async function listenNode(s0, hostname, port) {
  const http = await import("node:http");
  const { WebSocketServer } = await import("ws");
  let s;
  const wss = new WebSocketServer({ noServer: true });
  const server = http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const body = Buffer.concat(chunks).subarray(0, MAX_REQUEST_BYTES);
      const over = size >= MAX_REQUEST_BYTES;
      const url = `${s.base}${req.url}`;
      s.handle(req.method, url, req.rawHeaders, new Uint8Array(body.buffer, body.byteOffset, body.byteLength)).then(
        ([status, headers, bytes]) => {
          // a body left unread (over the limit) cannot be followed by another request on this connection
          if (over) headers.push("connection", "close");
          res.writeHead(status, headers);
          res.end(req.method === "HEAD" ? undefined : bytes);
        },
        // the answer was cut (the drop_connection fault) or the emulator closed: the connection goes, unanswered
        () => res.destroy(),
      );
    };
    req.on("data", (c) => {
      if (size >= MAX_REQUEST_BYTES) return;
      chunks.push(c);
      size += c.length;
      if (size >= MAX_REQUEST_BYTES) {
        req.pause();
        finish();
      }
    });
    req.on("end", finish);
    req.on("error", () => res.destroy());
  });
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url, s.base);
    if (url.pathname !== SOCKET_PATH || s.closed) {
      socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const frames = attach(s, url.search, {
        send: (text) => {
          if (ws.readyState !== ws.OPEN) throw new Error("socket closed");
          ws.send(text);
        },
        close: (code, reason) => ws.close(code, reason),
      });
      if (!frames) return;
      ws.on("message", (data, binary) => (binary ? frames.binary(data) : frames.text(data.toString("utf8"))));
      ws.on("ping", frames.control);
      ws.on("pong", frames.control);
      ws.on("close", frames.closed);
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", (e) => reject(cannotBind(e)));
    server.listen(port, hostname, () => resolve());
  });
  const base = origin(hostname, server.address().port);
  try {
    s = s0(base);
  } catch (e) {
    server.close();
    throw e;
  }
  s.base = base;
  return {
    s,
    base,
    async stop() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

async function listenDeno(s0, hostname, port) {
  let s;
  let server;
  try {
    server = Deno.serve({ hostname, port, onListen() {} }, (request) => handleDeno(request));
  } catch (e) {
    throw cannotBind(e);
  }
  const handleDeno = (request) => {
    const url = new URL(request.url);
    if (url.pathname === SOCKET_PATH && request.headers.get("upgrade")?.toLowerCase() === "websocket" && !s.closed) {
      const { socket, response } = Deno.upgradeWebSocket(request);
      socket.binaryType = "arraybuffer";
      socket.onopen = () => {
        const frames = attach(s, url.search, {
          send: (text) => socket.send(text),
          close: (code, reason) => socket.close(code, reason),
        });
        if (!frames) return;
        socket.onmessage = (e) => (typeof e.data === "string" ? frames.text(e.data) : frames.binary(new Uint8Array(e.data)));
        socket.onclose = frames.closed;
      };
      return response;
    }
    return answer(s, request).then((r) => r ?? cut());
  };
  const base = origin(hostname, server.addr.port);
  try {
    s = s0(base);
  } catch (e) {
    await server.shutdown();
    throw e;
  }
  return { s, base, stop: () => server.shutdown() };
}

function listenBun(s0, hostname, port) {
  let s;
  let server;
  try {
    server = bunServe();
  } catch (e) {
    throw cannotBind(e);
  }
  function bunServe() {
  return Bun.serve({
    hostname,
    port,
    // long polls (`wait`) hold a request up to 120 s: no idle cut
    idleTimeout: 0,
    fetch(request, srv) {
      const url = new URL(request.url);
      if (url.pathname === SOCKET_PATH && request.headers.get("upgrade")?.toLowerCase() === "websocket" && !s.closed) {
        return srv.upgrade(request, { data: { search: url.search } }) ? undefined : new Response(null, { status: 400 });
      }
      return answer(s, request).then((r) => r ?? cut());
    },
    websocket: {
      idleTimeout: 0,
      open(ws) {
        ws.data.frames = attach(s, ws.data.search, {
          send: (text) => {
            if (ws.send(text) === 0) throw new Error("socket closed");
          },
          close: (code, reason) => ws.close(code, reason),
        });
      },
      message(ws, data) {
        const f = ws.data.frames;
        if (f) typeof data === "string" ? f.text(data) : f.binary(new Uint8Array(data));
      },
      ping(ws) {
        ws.data.frames?.control();
      },
      pong(ws) {
        ws.data.frames?.control();
      },
      close(ws) {
        ws.data.frames?.closed();
      },
    },
  });
  }
  const base = origin(hostname, server.port);
  try {
    s = s0(base);
  } catch (e) {
    server.stop(true);
    throw e;
  }
  return { s, base, stop: async () => server.stop(true) };
}

/**
 * Starts the emulator on `hostname:port` (port 0: a free one) in Node, Deno or Bun. `cli` carries what the
 * command line adds (a journal to replay, the names of --state and --agents files for errors).
 */
export async function listen(Emulator, options, hostname, port, cli) {
  const s0 = (base) => start(Emulator, options, base, cli);
  let l;
  if (typeof globalThis.Deno?.serve === "function") l = await listenDeno(s0, hostname, port);
  else if (typeof globalThis.Bun?.serve === "function") l = listenBun(s0, hostname, port);
  else l = await listenNode(s0, hostname, port);
  let stopped;
  return {
    url: l.base,
    apiKey: l.s.apiKey,
    startLines: () => l.s.emu.startLines(),
    snapshot: () => l.s.snapshot(),
    close() {
      stopped ??= (async () => {
        l.s.close();
        await l.stop();
      })();
      return stopped;
    },
  };
}

/** `startEmulator(options)`: Node, Deno and Bun. */
export async function startEmulator(Emulator, options) {
  const port = options?.port ?? 0;
  const e = await listen(Emulator, options, "127.0.0.1", port, undefined);
  return { url: e.url, apiKey: e.apiKey, snapshot: e.snapshot, close: e.close };
}
