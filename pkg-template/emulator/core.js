// The emulator in-process, shared by every entry of `docauto/emulator`: the wasm build of the emulator crate
// (emulator/src/host/wasm) behind a `fetch`-shaped handler and a `WebSocket` class (./socket.js). The entries differ
// only in how they load the .wasm and whether they can listen (startEmulator, ./serve.js).

import { socketClass } from "./socket.js";

/** The largest request body read (the upload limit, 25 MiB), plus one byte so that the emulator answers 413. */
export const MAX_REQUEST_BYTES = 25 * 1024 * 1024 + 1;

/**
 * The origin of the addresses an in-process emulator hands out (upload, download, envelope and socket URLs): a name
 * under `.test`, which resolves nowhere, served by the emulator's own `fetch` and `WebSocket`. It is https so that a
 * `WebhookVerifier` takes it as its key set's origin (https, or http on loopback only).
 */
export const DEFAULT_BASE_URL = "https://emulator.test";

const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);

function emulatorError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

/** Throws the wasm's error again with its `code` (it crossed the boundary as a plain Error). */
function rethrow(e) {
  if (e instanceof Error) throw e;
  throw emulatorError("internal_error", String(e));
}

function flat(headers) {
  const out = [];
  headers.forEach((value, name) => out.push(name, value));
  return out;
}

function pairs(list) {
  const out = [];
  for (let i = 0; i + 1 < list.length; i += 2) out.push([list[i], list[i + 1]]);
  return out;
}

/**
 * Reads a body of at most `maxBytes`: a declared length above it, or a stream passing it, rejects with code
 * `too_large` (the emulator's `FetchError::TooLarge`), without reading the rest.
 */
async function readCapped(response, maxBytes) {
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw emulatorError("too_large", "body larger than the limit");
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw emulatorError("too_large", "body larger than the limit");
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** `promise`, or a rejection with the signal's reason once it aborts. */
function untilAborted(promise, signal) {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A signal that aborts with either of two (AbortSignal.any where it exists). */
function either(a, b) {
  if (typeof AbortSignal.any === "function") return AbortSignal.any([a, b]);
  const c = new AbortController();
  const abort = (s) => () => c.abort(s.reason);
  if (a.aborted || b.aborted) c.abort();
  a.addEventListener("abort", abort(a), { once: true });
  b.addEventListener("abort", abort(b), { once: true });
  return c.signal;
}

/**
 * Starts the wasm emulator. `Emulator` is the class of the initialised glue; `baseUrl` the origin of the addresses it
 * hands out; `cli` what the command line adds (`{statePath, journal, agentNames}`). Returns the handle the entries
 * build on: `{ emu, handle, fetch, WebSocket, snapshot, close, closed }`.
 */
export function start(Emulator, options, baseUrl, cli) {
  const { baseUrl: _ignored, port: _port, cli: _internal, deliver, ...rest } = options ?? {};
  if (deliver !== undefined && typeof deliver !== "function") {
    throw emulatorError("invalid_options", "deliver: must be a function taking a Request and returning a Response");
  }
  let json;
  try {
    json = JSON.stringify(cli ? { ...rest, cli } : rest);
  } catch (e) {
    throw emulatorError("invalid_options", `options: ${e?.message ?? e}`);
  }
  const closing = new AbortController();
  const origin = new URL(baseUrl).origin;
  let emu;
  let closed = false;

  /** Answers one request in-process: `[status, headers, body]`. */
  const handle = (method, url, headers, body) => {
    if (closed) return Promise.reject(emulatorError("emulator_closed", "the emulator was closed"));
    return emu.handle(method, url, headers, body);
  };

  // A webhook delivery handed to `deliver` instead of the network: the same request (method, URL, signed bytes and
  // headers, a signal that aborts at the attempt's timeout or when the emulator closes), its answer read as a fetch's.
  // A throw, a rejection, something other than a Response, or no answer within the timeout is a failed attempt
  // (`responseStatus: 0`), as a network error is.
  const delivered = async (method, url, headers, body, timeoutMs, maxBytes) => {
    // the handler never runs inside the emulator's call (it may call the emulator back, for the key set)
    await null;
    const signal = either(closing.signal, AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs))));
    const request = new Request(url, { method, headers: pairs(headers), body, signal });
    const answer = await untilAborted(Promise.resolve(deliver(request)), signal);
    if (typeof answer?.status !== "number" || typeof answer.headers?.forEach !== "function") {
      throw emulatorError("bad_answer", "deliver returned something other than a Response");
    }
    return [answer.status, flat(answer.headers), await untilAborted(readCapped(answer, maxBytes), signal)];
  };

  // The emulator's outgoing requests (documents by URL, webhook deliveries): the runtime's fetch, never following
  // redirects (as the native client), cut at its timeout or when the emulator closes. Its own addresses are served
  // in-process (an in-process emulator's origin exists nowhere else). With `deliver`, webhook deliveries
  // (`purpose` "deliver") go to it instead, whatever their URL.
  const hostFetch = async (method, url, headers, body, timeoutMs, maxBytes, purpose) => {
    let target;
    try {
      target = new URL(url);
    } catch {
      throw emulatorError("bad_url", "not a valid URL");
    }
    if (purpose === "deliver" && deliver) return delivered(method, url, headers, body, timeoutMs, maxBytes);
    if (target.origin === origin) {
      const [status, h, b] = await handle(method, url, headers, method === "GET" || method === "HEAD" ? new Uint8Array(0) : body);
      if (b.byteLength > maxBytes) throw emulatorError("too_large", "body larger than the limit");
      return [status, h, b];
    }
    const response = await globalThis.fetch(url, {
      method,
      headers: pairs(headers),
      body: method === "GET" || method === "HEAD" ? undefined : body,
      redirect: "manual",
      signal: either(closing.signal, AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)))),
    });
    return [response.status, flat(response.headers), await readCapped(response, maxBytes)];
  };

  try {
    emu = new Emulator(json, baseUrl, hostFetch);
  } catch (e) {
    rethrow(e);
  }

  /** `fetch(input, init)` served by this emulator, whatever the URL's host (a Request of any origin). */
  const fetch = async (input, init) => {
    let request = new Request(input, init);
    const signal = request.signal;
    const abortable = (promise) => (signal ? untilAborted(promise, signal) : promise);
    for (let hops = 0; ; hops++) {
      // not `request.body`: Firefox has no Request.body (a POST's body read as null there was an empty body)
      const noBody = request.method === "GET" || request.method === "HEAD";
      const body = noBody ? new Uint8Array(0) : new Uint8Array(await abortable(request.arrayBuffer()));
      let answer;
      try {
        answer = await abortable(handle(request.method, request.url, flat(request.headers), body));
      } catch (e) {
        if (e instanceof TypeError) {
          // the answer was cut (the drop_connection fault): the shape of a runtime's network error
          const cause = new Error(e.message);
          cause.code = "ECONNRESET";
          throw new TypeError("fetch failed", { cause });
        }
        throw e;
      }
      const [status, headers, bytes] = answer;
      let location;
      for (let i = 0; i + 1 < headers.length; i += 2) if (headers[i] === "location") location = headers[i + 1];
      if (REDIRECT.has(status) && request.redirect !== "manual" && location !== undefined) {
        if (request.redirect === "error") throw new TypeError("fetch failed: redirect mode is error");
        if (hops >= 20) throw new TypeError("fetch failed: too many redirects");
        const next = new URL(location, request.url).href;
        const get = status === 303 || ((status === 301 || status === 302) && request.method === "POST");
        request = new Request(next, {
          method: get ? "GET" : request.method,
          headers: request.headers,
          body: get || request.method === "GET" || request.method === "HEAD" ? undefined : body,
          redirect: request.redirect,
          signal,
        });
        continue;
      }
      const response = new Response(NULL_BODY.has(status) || request.method === "HEAD" ? null : bytes, {
        status,
        headers: pairs(headers),
      });
      Object.defineProperty(response, "url", { value: request.url });
      if (hops > 0) Object.defineProperty(response, "redirected", { value: true });
      return response;
    }
  };

  const s = {
    emu,
    handle,
    fetch,
    get closed() {
      return closed;
    },
    apiKey: emu.apiKey,
    snapshot() {
      if (closed) throw emulatorError("emulator_closed", "the emulator was closed");
      return emu.snapshot();
    },
    close() {
      if (closed) return;
      closed = true;
      closing.abort(emulatorError("emulator_closed", "the emulator was closed"));
      sockets.closeAll();
      emu.close();
      emu.free();
    },
  };
  const sockets = socketClass(s);
  s.WebSocket = sockets.WebSocket;
  return s;
}

/** `createEmulator(options)`: the emulator in-process, with no socket. */
export function createEmulator(Emulator, options) {
  const baseUrl = options?.baseUrl ?? DEFAULT_BASE_URL;
  let parsed;
  try {
    parsed = new URL(baseUrl);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== baseUrl.replace(/\/$/, "")) {
    throw emulatorError(
      "invalid_options",
      `baseUrl: must be an http(s) origin such as ${DEFAULT_BASE_URL} (the emulator's routes are at its root)`,
    );
  }
  const s = start(Emulator, options, parsed.origin, undefined);
  return {
    apiKey: s.apiKey,
    url: parsed.origin,
    fetch: s.fetch,
    WebSocket: s.WebSocket,
    snapshot: s.snapshot,
    async close() {
      s.close();
    },
  };
}

export { emulatorError };

/** startEmulator where nothing can listen (browsers, workers, edge functions). */
export function unavailable() {
  return emulatorError(
    "listen_unavailable",
    "startEmulator needs Node, Deno or Bun (it listens on a socket); here use createEmulator, whose fetch serves every route in-process",
  );
}
