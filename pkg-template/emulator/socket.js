// `emulator.WebSocket`: a class with the browser `WebSocket` interface, connected in-process to the emulator's
// realtime route. No socket and no port: the frames cross as calls into the emulator (`Emulator.socket`,
// `socketText`, `socketBinary`, `socketClosed`, the same door the listening server of ./serve.js uses), and the
// emulator's frames come back through two functions. Every event is dispatched after the call that caused it has
// returned, in order, so a handler never runs inside a call into the emulator's wasm.

const SOCKET_PATH = "/v1/realtime/socket";
const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;
const CLOSE_ABNORMAL = 1006;
const CLOSE_NO_STATUS = 1005;
const MAX_REASON_BYTES = 123;

function domException(message, name) {
  if (typeof DOMException === "function") return new DOMException(message, name);
  const e = new Error(message);
  e.name = name;
  return e;
}

/** An event of `type` with read-only `fields` (the runtime's own class when it has one: MessageEvent, CloseEvent). */
function makeEvent(type, Class, fields) {
  if (typeof Class === "function") {
    try {
      return new Class(type, fields);
    } catch {
      // a runtime whose class refuses these fields: the plain Event below
    }
  }
  const event = new Event(type);
  for (const [name, value] of Object.entries(fields)) {
    Object.defineProperty(event, name, { value, enumerable: true });
  }
  return event;
}

/**
 * Whether this runtime's `EventTarget` calls an `on<type>` property by itself when it dispatches (workerd's does):
 * then the class adds no listener of its own for its handlers, which would call them twice.
 */
const RUNTIME_CALLS_HANDLERS = (() => {
  let called = false;
  class Probe extends EventTarget {
    get onprobe() {
      return () => {
        called = true;
      };
    }
  }
  try {
    new Probe().dispatchEvent(new Event("probe"));
  } catch {
    // a runtime that refuses the probe: handlers are called through a listener
  }
  return called;
})();

function isArrayBuffer(data) {
  const tag = Object.prototype.toString.call(data);
  return tag === "[object ArrayBuffer]" || tag === "[object SharedArrayBuffer]";
}

/**
 * The `WebSocket` class of one emulator. `s` is the handle of ./core.js's `start` (`emu`, `closed`). Returns
 * `{ WebSocket, closeAll }`: `closeAll()` ends every open socket with 1006, as a dropped connection (the emulator
 * closed).
 */
export function socketClass(s) {
  const live = new Set();
  let drop;

  class WebSocket extends EventTarget {
    static CONNECTING = CONNECTING;
    static OPEN = OPEN;
    static CLOSING = CLOSING;
    static CLOSED = CLOSED;

    static {
      drop = (socket) => socket.#drop();
    }

    #url;
    #origin;
    #state = CONNECTING;
    #binaryType = "blob";
    #key;
    #handlers = new Map();
    #pending = null; // the send of a Blob being read: later sends wait for it (frames keep their order)

    /**
     * Connects to the emulator's `/v1/realtime/socket` route, whatever the URL's host (as `emulator.fetch`). An
     * unparsable URL, a scheme other than ws, wss, http or https, or a fragment throw a `SyntaxError` (the
     * browser's rules; the message never quotes the URL, which carries the ticket).
     */
    constructor(url, protocols) {
      super();
      let u;
      try {
        u = new URL(String(url));
      } catch {
        throw domException("WebSocket: the URL is invalid", "SyntaxError");
      }
      if (u.protocol === "http:") u.protocol = "ws:";
      else if (u.protocol === "https:") u.protocol = "wss:";
      if (u.protocol !== "ws:" && u.protocol !== "wss:") {
        throw domException("WebSocket: the URL's scheme must be ws or wss", "SyntaxError");
      }
      if (u.hash) throw domException("WebSocket: the URL must not have a fragment", "SyntaxError");
      const offered = protocols === undefined ? [] : typeof protocols === "string" ? [protocols] : [...protocols];
      this.#url = u.href;
      this.#origin = u.origin;
      // Connecting takes a turn of the event loop, as over a network: handlers set after `new` see `open`.
      setTimeout(() => this.#connect(u, offered), 0);
    }

    get url() {
      return this.#url;
    }
    get readyState() {
      return this.#state;
    }
    get bufferedAmount() {
      return 0;
    }
    get protocol() {
      return "";
    }
    get extensions() {
      return "";
    }
    get binaryType() {
      return this.#binaryType;
    }
    set binaryType(value) {
      // as the browser: another value is ignored
      if (value === "blob" || value === "arraybuffer") this.#binaryType = value;
    }

    get onopen() {
      return this.#handlers.get("open") ?? null;
    }
    set onopen(f) {
      this.#setHandler("open", f);
    }
    get onmessage() {
      return this.#handlers.get("message") ?? null;
    }
    set onmessage(f) {
      this.#setHandler("message", f);
    }
    get onerror() {
      return this.#handlers.get("error") ?? null;
    }
    set onerror(f) {
      this.#setHandler("error", f);
    }
    get onclose() {
      return this.#handlers.get("close") ?? null;
    }
    set onclose(f) {
      this.#setHandler("close", f);
    }

    /** A text frame (a string) or a binary one (ArrayBuffer, a typed array or DataView, Blob). */
    send(data) {
      if (this.#state === CONNECTING) throw domException("WebSocket: still in CONNECTING state", "InvalidStateError");
      if (this.#state !== OPEN) return; // the browser discards a frame sent after close
      if (this.#pending || (typeof Blob === "function" && data instanceof Blob)) {
        const prior = this.#pending ?? Promise.resolve();
        const next = prior
          .then(() => (typeof Blob === "function" && data instanceof Blob ? data.arrayBuffer() : data))
          .then((d) => this.#frame(d))
          .catch(() => {})
          .finally(() => {
            if (this.#pending === next) this.#pending = null;
          });
        this.#pending = next;
        return;
      }
      this.#frame(data);
    }

    /**
     * Closes: the emulator sees the peer's close (the session ends as when a client closes its socket), then
     * `close` fires with the code given (1005 without one). A code other than 1000 or 3000 to 4999 throws
     * `InvalidAccessError`, a reason over 123 bytes `SyntaxError`.
     */
    close(code, reason) {
      if (code !== undefined && code !== 1000 && !(Number.isInteger(code) && code >= 3000 && code <= 4999)) {
        throw domException("WebSocket: the close code must be 1000 or from 3000 to 4999", "InvalidAccessError");
      }
      const text = reason === undefined ? "" : String(reason);
      if (new TextEncoder().encode(text).byteLength > MAX_REASON_BYTES) {
        throw domException("WebSocket: the close reason is longer than 123 bytes", "SyntaxError");
      }
      if (this.#state === CLOSING || this.#state === CLOSED) return;
      if (this.#state === CONNECTING) return this.#fail();
      this.#state = CLOSING;
      if (!s.closed) s.emu.socketClosed(this.#key);
      queueMicrotask(() => this.#finish(code ?? CLOSE_NO_STATUS, text, true));
    }

    #setHandler(type, f) {
      const had = this.#handlers.has(type);
      this.#handlers.set(type, typeof f === "function" ? f : null);
      // one listener per type, added when a handler is first set (the position the browser gives it)
      if (!had && !RUNTIME_CALLS_HANDLERS) this.addEventListener(type, (e) => this.#handlers.get(type)?.call(this, e));
    }

    #frame(data) {
      if (this.#state !== OPEN || s.closed) return;
      if (typeof data === "string") s.emu.socketText(this.#key, data);
      else if (ArrayBuffer.isView(data)) {
        s.emu.socketBinary(this.#key, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      } else if (isArrayBuffer(data)) s.emu.socketBinary(this.#key, new Uint8Array(data));
      else s.emu.socketText(this.#key, String(data));
    }

    #connect(u, offered) {
      if (this.#state !== CONNECTING) return;
      // The emulator selects no subprotocol: a browser fails a connection that offered some and got none.
      if (s.closed || u.pathname !== SOCKET_PATH || offered.length > 0) return this.#fail();
      try {
        this.#key = s.emu.socket(
          u.search.startsWith("?") ? u.search.slice(1) : u.search,
          (text) => this.#fromEmulator(text),
          (code, reason) => this.#closedByEmulator(code, reason),
        );
      } catch {
        return this.#fail();
      }
      this.#state = OPEN;
      live.add(this);
      this.dispatchEvent(new Event("open"));
    }

    /** The emulator's text frame (called inside the emulator: the event waits for the call to return). */
    #fromEmulator(text) {
      // not OPEN: the emulator's send reports the socket gone (the browser drops a frame after its close)
      if (this.#state !== OPEN) throw new Error("socket closed");
      queueMicrotask(() => {
        if (this.#state !== OPEN) return;
        this.dispatchEvent(makeEvent("message", globalThis.MessageEvent, { data: text, origin: this.#origin }));
      });
    }

    /** The emulator's close frame (called inside the emulator). */
    #closedByEmulator(code, reason) {
      // queued behind the frames sent before it, which are dispatched first (as a close frame after them would be)
      queueMicrotask(() => this.#finish(code, reason, true));
    }

    #fail() {
      this.#state = CLOSED;
      live.delete(this);
      queueMicrotask(() => {
        this.dispatchEvent(new Event("error"));
        this.dispatchEvent(makeEvent("close", globalThis.CloseEvent, { code: CLOSE_ABNORMAL, reason: "", wasClean: false }));
      });
    }

    #finish(code, reason, wasClean) {
      if (!live.has(this)) return;
      live.delete(this);
      this.#state = CLOSED;
      if (!s.closed) s.emu.socketClosed(this.#key);
      this.dispatchEvent(makeEvent("close", globalThis.CloseEvent, { code, reason, wasClean }));
    }

    /** The emulator closed under the socket: ends it like a dropped connection. */
    #drop() {
      if (!live.has(this)) return;
      this.#state = CLOSING;
      queueMicrotask(() => this.#finish(CLOSE_ABNORMAL, "", false));
    }
  }

  for (const [name, value] of Object.entries({ CONNECTING, OPEN, CLOSING, CLOSED })) {
    Object.defineProperty(WebSocket.prototype, name, { value, enumerable: true });
  }

  return {
    WebSocket,
    closeAll() {
      for (const socket of [...live]) drop(socket);
    },
  };
}
