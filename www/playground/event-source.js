// The playground's `EventSource` for its in-page backend (playground.js sets it as app/ui.js's `host.EventSource`):
// the page's event stream is read from the backend in the page, not requested through the Service Worker. A response
// a Service Worker streams is still open when its page goes away, and Firefox reports each one that the page stops
// reading as an error of the page ("A ServiceWorker intercepted the request and encountered an unexpected error"),
// whatever the worker does: through the worker, the event stream logged one on every reload.

/** Whether `response` is an event stream (`text/event-stream`, with a body). */
export function isEventStream(response) {
  return Boolean(response.body) && /^text\/event-stream\b/i.test(response.headers.get("content-type") ?? "");
}

/**
 * An `EventSource` class whose streams `open(url, init)` answers (a `Response`, or a promise of one: the playground's
 * backend): what the browser's `EventSource` does with a server's stream, with no request the Service Worker would
 * have to stream. It reads the stream as the HTML standard says (fields `event`, `data`, `id`, `retry`; comments; CR,
 * LF or CRLF line ends; a last event without its blank line dropped), fires `open`, each event (`message` or its
 * `event:` name, a `MessageEvent`) and `error`, and when the stream ends reconnects after its `retry` delay (with
 * `Last-Event-ID`), until `close()`. An answer that is not a `200` event stream fails the connection (`error`,
 * `CLOSED`), as in a browser. Only URLs under `base` are taken. The page's going away ends it with the page.
 */
export function pageEventSource(open, base) {
  return class PageEventSource extends EventTarget {
    static CONNECTING = 0;
    static OPEN = 1;
    static CLOSED = 2;
    CONNECTING = 0;
    OPEN = 1;
    CLOSED = 2;
    readyState = 0;
    withCredentials = false;
    onopen = null;
    onmessage = null;
    onerror = null;
    #reader = null;
    #retry = 3000;
    #lastEventId = "";
    #timer;

    constructor(url) {
      super();
      this.url = new URL(url, document.baseURI).href;
      if (!this.url.startsWith(new URL(base).href)) throw new TypeError(`${this.url} is not under ${base}`);
      for (const type of ["open", "message", "error"]) this.addEventListener(type, (e) => this[`on${type}`]?.call(this, e));
      queueMicrotask(() => this.#connect());
    }

    close() {
      this.readyState = 2;
      clearTimeout(this.#timer);
      this.#reader?.cancel().catch(() => {});
      this.#reader = null;
    }

    async #connect() {
      if (this.readyState === 2) return;
      const headers = { accept: "text/event-stream" };
      if (this.#lastEventId) headers["last-event-id"] = this.#lastEventId;
      let response;
      try {
        response = await open(this.url, { headers });
      } catch {
        return this.#again();
      }
      if (this.readyState === 2) return response.body?.cancel().catch(() => {});
      if (response.status !== 200 || !isEventStream(response)) {
        response.body?.cancel().catch(() => {});
        this.readyState = 2;
        return this.dispatchEvent(new Event("error"));
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      this.#reader = reader;
      this.readyState = 1;
      this.dispatchEvent(new Event("open"));
      let pending = "";
      let type = "";
      let data = [];
      const line = (text) => {
        if (text === "") {
          if (data.length) {
            const event = new MessageEvent(type || "message", { data: data.join("\n"), origin: new URL(this.url).origin, lastEventId: this.#lastEventId });
            if (this.readyState !== 2) this.dispatchEvent(event);
          }
          type = "";
          data = [];
          return;
        }
        if (text.startsWith(":")) return;
        const colon = text.indexOf(":");
        const field = colon < 0 ? text : text.slice(0, colon);
        let value = colon < 0 ? "" : text.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") type = value;
        else if (field === "data") data.push(value);
        else if (field === "id" && !value.includes("\0")) this.#lastEventId = value;
        else if (field === "retry" && /^\d+$/.test(value)) this.#retry = Number(value);
      };
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          pending += value; // TextDecoderStream drops a leading BOM
          // a CR at the very end may be the first half of a CRLF: it waits for the next chunk
          const lines = pending.split(/\r\n|\r(?!$)|\n/);
          pending = lines.pop();
          for (const l of lines) line(l);
        }
      } catch {
        // the stream failed: as its end, reconnect
      }
      if (this.#reader === reader) this.#reader = null;
      this.#again();
    }

    #again() {
      if (this.readyState === 2) return;
      this.readyState = 0;
      this.dispatchEvent(new Event("error"));
      if (this.readyState !== 2) this.#timer = setTimeout(() => this.#connect(), this.#retry);
    }
  };
}
