// `node:http` for the site's examples: `createServer(handler).listen(port)` serves http://127.0.0.1:PORT in the page
// (router.js), so `fetch` to that address, a page example's `fetch("/session")` and the deliveries of the runner
// reach the handler with a request (`method`, `url`, `headers`, the body as an async iterable of bytes, `on("data")`)
// and a response (`statusCode`, `setHeader`, `writeHead`, `write`, `end`), as Node gives them. Nothing listens: a
// page cannot.
import { freePort, serve } from "../router.js";

/** Every server an example started, in order (the runner finds the one a Run started here). */
export const started = [];

const bytesOf = (chunk) =>
  typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk?.buffer ?? chunk ?? []);
const asBuffer = (bytes) => (globalThis.Buffer?.from ? globalThis.Buffer.from(bytes) : bytes);

class Emitter {
  #listeners = new Map();
  on(event, fn) {
    if (!this.#listeners.has(event)) this.#listeners.set(event, []);
    this.#listeners.get(event).push(fn);
    return this;
  }
  once(event, fn) {
    const once = (...a) => {
      this.off(event, once);
      fn(...a);
    };
    return this.on(event, once);
  }
  off(event, fn) {
    const list = this.#listeners.get(event) ?? [];
    const i = list.indexOf(fn);
    if (i >= 0) list.splice(i, 1);
    return this;
  }
  addListener(event, fn) {
    return this.on(event, fn);
  }
  removeListener(event, fn) {
    return this.off(event, fn);
  }
  emit(event, ...args) {
    for (const fn of [...(this.#listeners.get(event) ?? [])]) fn.apply(this, args);
    return (this.#listeners.get(event) ?? []).length > 0;
  }
}

export class IncomingMessage extends Emitter {
  constructor({ method, url, headers, body }) {
    super();
    this.method = method;
    this.url = url;
    this.headers = headers;
    this.rawHeaders = Object.entries(headers).flat();
    this.httpVersion = "1.1";
    this.socket = { remoteAddress: "127.0.0.1", remotePort: 0 };
    this.complete = false;
    this.body = body;
    this.encoding = null;
    this.flowing = false;
  }
  setEncoding(encoding) {
    this.encoding = encoding;
    return this;
  }
  chunk() {
    return this.encoding ? new TextDecoder().decode(this.body) : asBuffer(this.body);
  }
  on(event, fn) {
    super.on(event, fn);
    if (event === "data" && !this.flowing) {
      this.flowing = true;
      queueMicrotask(() => {
        if (this.body.length) this.emit("data", this.chunk());
        this.complete = true;
        this.emit("end");
      });
    }
    return this;
  }
  resume() {
    if (!this.flowing) this.on("data", () => {});
    return this;
  }
  async *[Symbol.asyncIterator]() {
    if (this.body.length) yield this.chunk();
    this.complete = true;
  }
}

export class ServerResponse extends Emitter {
  constructor(method, done) {
    super();
    this.method = method;
    this.done = done;
    this.statusCode = 200;
    this.statusMessage = "";
    this.headers = new Headers();
    this.chunks = [];
    this.headersSent = false;
    this.writableEnded = false;
    this.finished = false;
  }
  setHeader(name, value) {
    this.headers.set(name, Array.isArray(value) ? value.join(", ") : String(value));
    return this;
  }
  getHeader(name) {
    return this.headers.get(name) ?? undefined;
  }
  hasHeader(name) {
    return this.headers.has(name);
  }
  removeHeader(name) {
    this.headers.delete(name);
  }
  writeHead(status, message, headers) {
    if (typeof message === "object" && message !== null) [message, headers] = [undefined, message];
    this.statusCode = status;
    if (message) this.statusMessage = message;
    for (const [k, v] of Array.isArray(headers) ? [] : Object.entries(headers ?? {})) this.setHeader(k, v);
    this.headersSent = true;
    return this;
  }
  write(chunk) {
    if (chunk !== undefined && chunk !== null) this.chunks.push(bytesOf(chunk));
    this.headersSent = true;
    return true;
  }
  end(chunk, encoding, callback) {
    if (typeof chunk === "function") [chunk, callback] = [undefined, chunk];
    if (typeof encoding === "function") callback = encoding;
    if (this.writableEnded) return this;
    if (chunk !== undefined && chunk !== null) this.write(chunk);
    this.writableEnded = this.finished = this.headersSent = true;
    const total = this.chunks.reduce((n, c) => n + c.length, 0);
    const body = new Uint8Array(total);
    let at = 0;
    for (const c of this.chunks) {
      body.set(c, at);
      at += c.length;
    }
    const empty = [101, 204, 205, 304].includes(this.statusCode) || this.method === "HEAD";
    this.done(new Response(empty ? null : body, { status: this.statusCode, statusText: this.statusMessage, headers: this.headers }));
    queueMicrotask(() => {
      this.emit("finish");
      this.emit("close");
      callback?.();
    });
    return this;
  }
}

export class Server extends Emitter {
  constructor(handler) {
    super();
    if (handler) this.on("request", handler);
    this.port = null;
    this.stops = [];
    this.listening = false;
  }

  listen(...args) {
    const callback = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
    const options = typeof args[0] === "object" && args[0] !== null ? args[0] : { port: args[0] };
    this.port = Number(options.port) || freePort();
    const handle = (input, init) => this.handle(new Request(input, init));
    this.stops = [serve(`http://127.0.0.1:${this.port}`, handle), serve(`http://localhost:${this.port}`, handle)];
    this.listening = true;
    started.push(this);
    queueMicrotask(() => {
      callback?.();
      this.emit("listening");
    });
    return this;
  }

  address() {
    return this.port === null ? null : { address: "127.0.0.1", family: "IPv4", port: this.port };
  }

  close(callback) {
    for (const stop of this.stops) stop();
    this.stops = [];
    this.listening = false;
    queueMicrotask(() => {
      callback?.();
      this.emit("close");
    });
    return this;
  }

  closeAllConnections() {}

  /** A `Request` through the handlers, as Node would call them; resolves to what they answered. */
  async handle(request) {
    const url = new URL(request.url);
    const headers = {};
    request.headers.forEach((v, k) => (headers[k] = v));
    const body = ["GET", "HEAD"].includes(request.method) ? new Uint8Array(0) : new Uint8Array(await request.arrayBuffer());
    const req = new IncomingMessage({ method: request.method, url: url.pathname + url.search, headers, body });
    return new Promise((resolve, reject) => {
      const res = new ServerResponse(request.method, resolve);
      if (this.requestHandlers.length === 0) return void res.writeHead(404).end();
      for (const fn of this.requestHandlers) {
        try {
          const out = fn.call(this, req, res);
          // An async handler's rejection: Node would end the process on it; here the request fails with it.
          if (out && typeof out.then === "function") out.then(undefined, reject);
        } catch (e) {
          reject(e);
        }
      }
    });
  }

  get requestHandlers() {
    return (this._request ??= []);
  }

  on(event, fn) {
    if (event !== "request") return super.on(event, fn);
    this.requestHandlers.push(fn);
    return this;
  }
}

export function createServer(options, handler) {
  return new Server(typeof options === "function" ? options : handler);
}

export const STATUS_CODES = { 200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error" };

export default { createServer, Server, IncomingMessage, ServerResponse, STATUS_CODES };
