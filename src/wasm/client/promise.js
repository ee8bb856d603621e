// The client's one driver and its promise shapes (plain ESM, no dependencies). `run` drives every method's core
// flow (`FlowStepper` in `stepper.rs`: one call, a wait, an upload, a download, a page): the wasm handle decides
// every step, this loop performs it (`attempt`, `pause`), and shapes the result: the awaitable `APIPromise` with
// `withResponse()`, and for a list the cursor `Page`, async-iterable over every item of every page.

/**
 * A page of a cursor list, as the core read it (its items parsed here: `pageItems`).
 * @param {{items: unknown[], hasMore: boolean, cursor: string | null, nextCursor: string | undefined}} read
 * @param {{resource: {list(params: object, options?: object): Promise<object>}, params?: object, options?: object}} list
 *   the resource whose `list` made the page, its parameters (the cursor is replaced) and call options (reused)
 */
function makePage(read, list) {
  const { nextCursor } = read;
  const page = {
    object: "list",
    data: read.items,
    hasMore: read.hasMore,
    cursor: read.cursor,
    hasNextPage() {
      return nextCursor !== undefined;
    },
    nextPage() {
      return nextCursor === undefined ? Promise.resolve(null) : list.resource.list({ ...(list.params ?? {}), cursor: nextCursor }, list.options);
    },
    [Symbol.asyncIterator]() {
      return iterate(Promise.resolve(page));
    },
  };
  return page;
}

/**
 * Every item of every page, from the page `first` resolves to: an async iterator written out rather than an async
 * generator, whose every item took several promise turns (`yield*` over a page, then the generator's own await): an
 * item of the page at hand is one resolved promise. A rejected page rejects `next()`; `return()` ends it.
 */
function iterate(first) {
  let page;
  let at = 0;
  let over = false;
  const advance = async () => {
    for (;;) {
      if (over) return { value: undefined, done: true };
      if (page !== undefined && at < page.data.length) return { value: page.data[at++], done: false };
      try {
        page = await (page === undefined ? first : page.nextPage());
      } catch (e) {
        over = true;
        throw e;
      }
      at = 0;
      if (!page) over = true;
    }
  };
  return {
    next() {
      if (!over && page !== undefined && at < page.data.length) return Promise.resolve({ value: page.data[at++], done: false });
      return advance();
    },
    return(value) {
      over = true;
      return Promise.resolve({ value, done: true });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

// Request and response plumbing: one boundary crossing each instead of one per header.

const utf8 = new TextEncoder();

/**
 * A string as UTF-8 bytes, for wasm: a string argument crosses one UTF-16 unit at a time (a 20 KB params text cost
 * about 80 us), the runtime's encoder and one copy a few.
 */
export function utf8Bytes(text) {
  return utf8.encode(text);
}

/** `text` as UTF-8 written into `into` (wasm memory) when all of it fits: the bytes written, else -1. */
export function utf8Into(text, into) {
  const { read, written } = utf8.encodeInto(text, into);
  return read === text.length ? written : -1;
}

/** Longest delay `setTimeout` honours (a longer one fires at once in Node and browsers). */
const MAX_TIMER_MS = 2_147_483_647;

// Attempt deadlines. A `setTimeout` per attempt costs a call in Node tens of microseconds (its timer list is made and
// torn down each time, with a native re-arm). Where a timer can be told not to hold the process open (Node and Bun:
// `ref`/`unref`; Deno: `Deno.refTimer`/`Deno.unrefTimer`), deadlines share one timer instead: it is armed for the
// earliest pending deadline and re-armed only when an earlier one arrives or when it fires, so a call whose deadline
// is later than the armed one costs no timer work. It holds the process open while a deadline is pending (as a timer
// per attempt would), and not once none is. Elsewhere (browsers, workerd, edge isolates, where a timer belongs to the
// request that set it) each attempt keeps its own `setTimeout`.

/** `{ cancel() }` of a deadline that calls `expire` once `ms` have passed (clamped to what timers honour). */
function startDeadline(ms, expire) {
  const delay = Math.min(Math.max(ms, 1), MAX_TIMER_MS);
  if (sharedTimer()) {
    const entry = new DeadlineEntry(now() + delay, expire);
    if (deadlines.size === 0 && armed !== undefined) holdOpen(armed, true);
    deadlines.add(entry);
    if (entry.at < armedAt) arm(entry.at);
    return entry;
  }
  const timer = setTimeout(expire, delay);
  return { cancel: () => clearTimeout(timer) };
}

class DeadlineEntry {
  constructor(at, expire) {
    this.at = at;
    this.expire = expire;
  }

  cancel() {
    if (deadlines.delete(this) && deadlines.size === 0 && armed !== undefined) holdOpen(armed, false);
  }
}

const deadlines = new Set();
let armed;
let armedAt = Infinity;
let canUnref;

const now = typeof performance === "object" && typeof performance?.now === "function" ? () => performance.now() : () => Date.now();

function sharedTimer() {
  if (canUnref === undefined) {
    const probe = setTimeout(ignoreTimer, MAX_TIMER_MS);
    const deno = globalThis.Deno;
    canUnref =
      (typeof probe?.ref === "function" && typeof probe?.unref === "function") ||
      (typeof deno?.refTimer === "function" && typeof deno?.unrefTimer === "function");
    clearTimeout(probe);
  }
  return canUnref;
}

function ignoreTimer() {}

/** Lets `timer` keep the process open, or not. */
function holdOpen(timer, hold) {
  if (typeof timer?.ref === "function") {
    if (hold) timer.ref();
    else timer.unref();
  } else if (hold) {
    globalThis.Deno?.refTimer?.(timer);
  } else {
    globalThis.Deno?.unrefTimer?.(timer);
  }
}

function arm(at) {
  if (armed !== undefined) clearTimeout(armed);
  armedAt = at;
  armed = setTimeout(fire, Math.min(Math.max(at - now(), 1), MAX_TIMER_MS));
  if (deadlines.size === 0) holdOpen(armed, false);
}

function fire() {
  armed = undefined;
  armedAt = Infinity;
  const t = now();
  let next = Infinity;
  for (const entry of deadlines) {
    if (entry.at <= t) {
      deadlines.delete(entry);
      entry.expire();
    } else if (entry.at < next) {
      next = entry.at;
    }
  }
  if (next !== Infinity) arm(next);
}

/** The runtime's error code of a failed `fetch` (undici's `cause.code` in Node, `error.code` in Bun), for the core. */
function errorCode(error) {
  const cause = error && typeof error === "object" ? error.cause : undefined;
  const code = cause?.code ?? (error && typeof error === "object" ? error.code : undefined);
  return typeof code === "string" ? code : "";
}

function describe(error) {
  let out = typeof error === "string" ? error : String(error?.message ?? "fetch failed");
  const cause = error && typeof error === "object" ? error.cause : undefined;
  const detail = cause?.code ?? cause?.message;
  if (typeof detail === "string" && detail) out += ` (${detail})`;
  return out;
}

/** What `attempt` does with a 2xx body: the core's `Read` (the numbers are `read_code` in `stepper.rs`). */
const ReadMode = Object.freeze({ TEXT: 0, BYTES: 1, JSON: 2, FINAL_JSON: 3, PAGE: 4 });

/**
 * One HTTP attempt: `fetch`, then the body, under a timeout and the caller's signal. Retries, sleeps and every
 * decision stay in the core; this only performs the I/O, with one boundary crossing per attempt.
 *
 * `mode` (a `ReadMode`, the core's `Read`) says what to do with a 2xx body: TEXT read it as text, BYTES read its
 * bytes, JSON parse it here (the data never enters wasm; a body that does not parse is handed over as text, for the
 * core to report), FINAL_JSON as JSON, and a body that parses ends the call here (`final`), PAGE parse it here and
 * hand the core the page without its items (`pageForCore`). An error body (status 400 or above) longer than
 * `maxErrorBytes` is not read (`unread`). Resolves to
 * `{ status, head, headers, text, bytes, data, parsed, final, items, unread }`: `head` is header text (`name\nvalue\n...`,
 * lower-case names) for the core, every header except after a JSON parse here, where the core only reads the request
 * id, the replay flag, `Location` and `Retry-After` (a poll's pause), and nothing after a final one; `headers` is the
 * response's own `Headers`, read again only if the caller asks for `withResponse()`. Rejects with
 * `{ kind: "timeout" | "aborted" | "connection" | "too_large", message, code }` (`code`: the runtime's error code,
 * from which the core tells a request never sent from one whose answer was lost).
 *
 * Timeouts: the attempt runs under its own `AbortController`, which the caller's signal or the timer aborts; the
 * timer aborts the request (closing its connection) before the attempt settles as timed out, so a resend never runs
 * next to the attempt it replaces. This costs an abort listener per `fetch` (measured in `tests/js/client/bench.mjs`).
 * @param {((url: string, init: object) => Promise<Response>) | undefined} fetchFn the caller's fetch, or the global
 */
export function attempt(fetchFn, url, method, headerLines, body, redirect, timeoutMs, signal, mode, maxBytes, maxErrorBytes) {
  return new Promise((resolve, reject) => {
    // Every attempt runs under its own controller, signal or not: a timed-out attempt is aborted (its connection
    // closed) before the core can send the next one, so two copies of one write are never in flight at once.
    const controller = freshController();
    let settled = false;
    let deadline;
    const onAbort = () => {
      controller?.abort();
      finish(reject, { kind: "aborted", message: "aborted" });
    };
    let unlisten;
    const finish = (settle, value) => {
      if (settled) return;
      settled = true;
      deadline?.cancel();
      unlisten?.();
      settle(value);
    };
    if (signal) {
      if (signal.aborted) {
        onAbort();
        return;
      }
      unlisten = whenAborted(signal, onAbort);
    }
    deadline = startDeadline(timeoutMs, () => {
      controller?.abort();
      finish(reject, { kind: "timeout", message: "timeout" });
    });
    const headers = {};
    if (headerLines) {
      const parts = headerLines.split("\n");
      for (let i = 0; i + 1 < parts.length; i += 2) headers[parts[i]] = parts[i + 1];
    }
    const init = { method, headers, redirect };
    if (body !== undefined) init.body = body;
    if (controller) init.signal = controller.signal;
    let started;
    try {
      started = Promise.resolve(fetchFn ? fetchFn(url, init) : fetch(url, init));
    } catch (e) {
      // `fetch` threw before starting (bad URL or header): nothing was sent.
      finish(reject, { kind: "connection", message: describe(e), code: "DOCAUTO_NOT_SENT" });
      return;
    }
    started
      .then((response) => {
        if (!response || typeof response !== "object") throw new TypeError("fetch resolved to something that is not a Response");
        if (settled) {
          // Timed out (or aborted) while the answer was on its way: release the connection, read nothing.
          discard(response);
          return undefined;
        }
        const status = Number(response.status) || 0;
        const ok = status >= 200 && status < 300;
        if (ok && mode === ReadMode.BYTES) {
          return readBody(response, maxBytes, true).then((bytes) => {
            finish(resolve, answer(status, headerText(response.headers), response.headers, "", bytes));
          });
        }
        // An error body (status 400 or above) is read up to the core's smaller cap; a longer one is left unread
        // (`unread`: the core makes the error from the status and headers).
        const failed = status >= 400;
        const cap = failed && maxErrorBytes > 0 ? Math.min(maxBytes, maxErrorBytes) : maxBytes;
        return readBody(response, cap, false).then((raw) => {
          const text = String(raw);
          if (ok && (mode === ReadMode.JSON || mode === ReadMode.FINAL_JSON)) {
            let data;
            try {
              data = JSON.parse(text);
            } catch {
              // Not JSON (an empty body included): the core reads the text and refuses it.
            }
            // Only an object is the route's data; anything else goes to the core as text, which refuses it.
            if (isObject(data)) {
              const headers = response.headers;
              // The core said such an answer ends the call (`Read::FinalJson`): JS ends it, and `withResponse()` has
              // the core read its request id and replay flag from `headers`, only if it is called.
              const final = mode === ReadMode.FINAL_JSON && typeof headers?.forEach === "function";
              const result = answer(status, final ? "" : coreHeaderText(headers), headers, "", undefined);
              result.data = data;
              result.parsed = true;
              result.final = final;
              finish(resolve, result);
              return;
            }
          }
          if (ok && mode === ReadMode.PAGE) {
            const page = pageForCore(text);
            const result = answer(status, headerText(response.headers), response.headers, page.text, undefined);
            result.items = page.items;
            finish(resolve, result);
            return;
          }
          const result = answer(status, headerText(response.headers), response.headers, text, undefined);
          if (failed) result.read = errorRead(text);
          finish(resolve, result);
        }, (e) => {
          if (!(failed && e === TOO_LARGE)) throw e;
          const result = answer(status, headerText(response.headers), response.headers, "", undefined);
          result.unread = true;
          finish(resolve, result);
        });
      })
      .catch((e) =>
        finish(reject, e === TOO_LARGE ? { kind: "too_large", message: "too large" } : { kind: "connection", message: describe(e), code: errorCode(e) }),
      );
  });
}

const TOO_LARGE = Symbol("docauto.tooLarge");

// Each attempt's `AbortController` is new and used once. Node makes a controller's signal (an `EventTarget`) on first
// read, which costs a call about 7 us between two requests (`tests/js/client/bench.mjs`'s GET is 350 us in all); where
// finished calls are freed in batches after their turn (`release`: Node and Bun), that batch also makes the next few
// controllers, signal included, while the next request is on the wire. Elsewhere each attempt makes its own.
const spareControllers = [];
const SPARE_CONTROLLERS = 4;

/** An `AbortController` no request has used (or undefined where the runtime has none). */
function freshController() {
  return spareControllers.pop() ?? newController();
}

function newController() {
  if (typeof AbortController !== "function") return undefined;
  const controller = new AbortController();
  void controller.signal;
  return controller;
}

/** Tops up the spare controllers (from the batch that frees finished calls). */
function makeSpareControllers() {
  while (spareControllers.length < SPARE_CONTROLLERS) {
    const controller = newController();
    if (!controller) return;
    spareControllers.push(controller);
  }
}

/**
 * The body as text (or bytes), at most `maxBytes` (the core's cap): a declared `content-length` above it is refused
 * unread; a body of unknown length is read as a stream and cancelled once it passes the cap. Rejects with
 * `TOO_LARGE`. A body whose declared length is within the cap and is its decoded length takes the runtime's own
 * `text()`/`arrayBuffer()`: not when it is content-encoded (`fetch` decodes it, and 100 KB of gzip can be 100 MiB of
 * text), nor when a browser may hide the encoding (a `cors` response shows only safelisted headers).
 */
function readBody(response, maxBytes, asBytes) {
  const limit = typeof maxBytes === "number" && maxBytes > 0 ? maxBytes : Infinity;
  const declared = Number(response.headers?.get?.("content-length") ?? NaN);
  if (declared > limit) {
    discard(response);
    return Promise.reject(TOO_LARGE);
  }
  const encoding = String(response.headers?.get?.("content-encoding") ?? "").trim().toLowerCase();
  const exact =
    Number.isFinite(declared) && (encoding === "" || encoding === "identity") && response.type !== "cors" && response.type !== "opaque";
  const reader = exact || limit === Infinity ? undefined : response.body?.getReader?.();
  if (!reader) {
    return asBytes ? response.arrayBuffer().then((b) => new Uint8Array(b)) : response.text();
  }
  return (async () => {
    const chunks = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        reader.cancel().catch(() => {});
        throw TOO_LARGE;
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    return asBytes ? bytes : new TextDecoder().decode(bytes);
  })();
}

/** Cancels an unread body (ignoring runtimes whose bodies cannot be cancelled). */
function discard(response) {
  try {
    const cancelled = response.body?.cancel?.();
    cancelled?.catch?.(() => {});
  } catch {
    // nothing to release
  }
}

function answer(status, head, headers, text, bytes) {
  return { status, head, headers, text, bytes, data: undefined, parsed: false, final: false, items: undefined, unread: false, read: undefined };
}

/**
 * A list page as the core's `Read::Page` lets the host report it: a JSON object whose `data` is an array goes to the
 * core with `data` set to `[]` (its other members as they are), and the items stay here; any other body goes as it
 * came, for the core to refuse or read. The items of a large page so never enter wasm.
 */
function pageForCore(text) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { text, items: undefined };
  }
  if (!isObject(parsed) || !Array.isArray(parsed.data)) {
    return { text, items: undefined };
  }
  // Only the members the core reads: another member (100 000 levels deep, say) is never written again.
  const core = { data: [] };
  for (const name of PAGE_MEMBERS) if (Object.hasOwn(parsed, name)) core[name] = parsed[name];
  try {
    return { text: JSON.stringify(core), items: parsed.data };
  } catch {
    // One of those members cannot be written (too deep): the core reads the page as it came, and refuses it.
    return { text, items: undefined };
  }
}

/** The members of a page the core reads besides `data` (`Page::from_value`). */
const PAGE_MEMBERS = ["object", "has_more", "hasMore", "cursor"];

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * An error body as `JSON.parse` reads it, written back plainly for the core (`Body::ErrorText`): strings made
 * well-formed, numbers beyond a double `null` (as `JSON.stringify` writes them), nesting past 8 levels `null`. The core
 * reads it only when its own reader refuses the text (a lone surrogate, `1e400`, deep nesting), so an envelope keeps
 * its `code` whenever `JSON.parse` reads it. `undefined` when `JSON.parse` cannot read the text either.
 */
function errorRead(text) {
  try {
    return JSON.stringify(plainJson(JSON.parse(text), 0));
  } catch {
    return undefined;
  }
}

function plainJson(value, depth) {
  if (typeof value === "string") return wellFormed(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= 8) return null;
  if (Array.isArray(value)) return value.map((v) => plainJson(v, depth + 1));
  // A null prototype: a member named `__proto__` stays a member.
  const out = Object.create(null);
  for (const name of Object.keys(value)) out[wellFormed(name)] = plainJson(value[name], depth + 1);
  return out;
}

function wellFormed(text) {
  return typeof text.toWellFormed === "function" ? text.toWellFormed() : text.replace(/[\uD800-\uDFFF]/gu, "\uFFFD");
}

/** Headers as `name\nvalue\n...` text, names in lower case (newlines inside values become spaces). */
function headerText(headers) {
  let out = "";
  if (headers && typeof headers.forEach === "function") {
    headers.forEach((value, name) => {
      out += `${String(name).toLowerCase()}\n${String(value).replace(/[\r\n]/g, " ")}\n`;
    });
  }
  return out;
}

/** The headers the core reads from a 2xx it does not decode, as header text. */
function coreHeaderText(headers) {
  if (!headers || typeof headers.get !== "function") return headerText(headers);
  let out = "";
  for (const name of CORE_HEADERS) {
    const value = headers.get(name);
    if (value !== null && value !== undefined) out += `${name}\n${String(value).replace(/[\r\n]/g, " ")}\n`;
  }
  return out;
}

const CORE_HEADERS = ["x-request-id", "idempotent-replay", "location", "retry-after", "retry-after-ms"];

/** A `Headers` (or anything with `forEach`) as a plain object, names in lower case. */
function headerObject(headers) {
  const out = {};
  if (headers && typeof headers.forEach === "function") {
    headers.forEach((value, name) => {
      out[String(name).toLowerCase()] = String(value);
    });
  }
  return out;
}

/** The core's reader of an answer's request id and replay flag (`AnswerMeta::read`), set once by `stepper.rs`. */
let readAnswerMeta = () => ({ requestId: null, idempotentReplay: false });

/** @param {(headerText: string) => {requestId: string | null, idempotentReplay: boolean}} reader */
export function setAnswerMeta(reader) {
  readAnswerMeta = reader;
}

/**
 * A call's result: its data and what `withResponse()` shows of the last answer. `meta` is the core's
 * `{ requestId, idempotentReplay }`, or undefined when JS ended the call on the answer (the core reads it from the
 * headers only if `withResponse()` is called).
 */
class Answered {
  constructor(data, status, headers, meta) {
    this.data = data;
    this.status = status;
    this.headers = headers;
    this.meta = meta;
  }

  /** `{ data, response: { status, headers, requestId, idempotentReplay } }`, `headers` a plain object. */
  plain() {
    const meta = this.meta ?? readAnswerMeta(headerText(this.headers));
    const response = {
      status: this.status,
      headers: headerObject(this.headers),
      requestId: meta.requestId ?? null,
      idempotentReplay: meta.idempotentReplay,
    };
    return { data: this.data, response };
  }
}

// The one driver: the wasm handle decides every step, this loop performs it.

/** The `method` argument of `sendStep` indexes this table (`method_code` in `stepper.rs`). */
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** The kinds of `Step` (made only here, by the `*Step` functions). */
const StepKind = Object.freeze({ SEND: 0, PAUSE: 1, DONE: 2, FAIL: 3 });

/** What a finished flow hands back: the core's `FlowValue` (the numbers are `result_code` in `stepper.rs`). */
const ResultKind = Object.freeze({ DATA: 0, VOID: 1, LOCATION: 2, BYTES: 3, PAGE: 4, SESSION: 5 });

/** A step of `FlowStepper` (one shape for every kind). */
class Step {
  constructor(kind, url, method, headers, body, redirect, ms, mode, value, maxBytes = 0, maxErrorBytes = 0) {
    this.kind = kind;
    this.url = url;
    this.method = method;
    this.headers = headers;
    this.body = body;
    this.redirect = redirect;
    this.ms = ms;
    this.mode = mode;
    this.value = value;
    this.maxBytes = maxBytes;
    this.maxErrorBytes = maxErrorBytes;
  }
}

/** A request to send; `read` is a `ReadMode`. */
export function sendStep(url, method, headers, body, follow, timeoutMs, read, maxBytes, maxErrorBytes) {
  return new Step(StepKind.SEND, url, METHODS[method] ?? "GET", headers, body, follow ? "follow" : "manual", timeoutMs, read, undefined, maxBytes, maxErrorBytes);
}

/** A pause before the next request. */
export function pauseStep(ms) {
  return new Step(StepKind.PAUSE, "", "", "", undefined, "", ms, ReadMode.TEXT, undefined);
}

/**
 * The flow succeeded: the kind of its result (a `ResultKind`), the value the core made of it (a location, a page),
 * and the last answer's status, request id and replay flag as the core read them.
 */
export function doneStep(kind, value, status, requestId, idempotentReplay) {
  return new Step(StepKind.DONE, "", "", "", undefined, "", 0, ReadMode.TEXT, { kind, value, status, meta: { requestId, idempotentReplay } });
}

/** The flow failed: the error to throw. */
export function failStep(error) {
  return new Step(StepKind.FAIL, "", "", "", undefined, "", 0, ReadMode.TEXT, error);
}

const HOLDER = Symbol("docauto.answered");

/**
 * The one `APIPromise`: the promise of the data with `withResponse()` (and, for a list, async iteration over every
 * item of every page). `holder.answered` is set once the flow ends.
 */
function apiPromise(data, holder, paged) {
  data[HOLDER] = holder;
  data.withResponse = withResponse;
  if (paged) {
    Object.defineProperty(data, Symbol.asyncIterator, {
      value() {
        return iterate(data);
      },
    });
  }
  return data;
}

/** `withResponse()` of an `APIPromise`: `{ data, response }` once the flow has ended. */
function withResponse() {
  const holder = this[HOLDER];
  return this.then(() => holder.answered.plain());
}

/** The `APIPromise` of a method refused before any request (bad arguments). */
export function failed(error, paged) {
  return apiPromise(Promise.reject(error), {}, paged);
}

/**
 * Runs a `FlowStepper` to its end from its `first` step (made with the handle): sends, pauses and checks the
 * caller's signal where its steps say. Returns the `APIPromise` of the method (a page's when `list` is
 * `{ resource, params, options }`); rejects with the `errors.js` class of the failure. The handle is freed at the end.
 * `observation` (`telemetry.js`, undefined when nobody listens) sees each request go out and the method end; the
 * handle hands it the core's records.
 */
export function drive(stepper, first, fetchFn, signal, list, observation) {
  const holder = { answered: undefined };
  return apiPromise(run(stepper, first, fetchFn, signal, holder, list, observation), holder, list !== undefined);
}

async function run(stepper, first, fetchFn, signal, holder, list, observation) {
  try {
    let step = first;
    let answer;
    for (;;) {
      if (step.kind === StepKind.SEND) {
        if (signal?.aborted) {
          stepper.abort();
          step = stepper.step();
          continue;
        }
        const started = Date.now();
        try {
          if (observation) {
            // Each request under its own span: the runtime's `fetch` instrumentation nests under it.
            observation.send(step.method, step.url);
            const sending = step;
            answer = await observation.within(() =>
              attempt(fetchFn, sending.url, sending.method, sending.headers, sending.body, sending.redirect, sending.ms, signal, sending.mode, sending.maxBytes, sending.maxErrorBytes),
            );
          } else {
            answer = await attempt(fetchFn, step.url, step.method, step.headers, step.body, step.redirect, step.ms, signal, step.mode, step.maxBytes, step.maxErrorBytes);
          }
        } catch (failure) {
          step = stepper.onFailure(failure, Date.now() - started);
          continue;
        }
        // An observed flow never asks for a final read: the core reads every answer and records it.
        if (answer.final) {
          holder.answered = new Answered(answer.data, answer.status, answer.headers, undefined);
          return answer.data;
        }
        step = stepper.onAnswer(answer, Date.now() - started);
      } else if (step.kind === StepKind.PAUSE) {
        if (!(await pause(step.ms, signal))) stepper.abort();
        step = stepper.step();
      } else if (step.kind === StepKind.DONE) {
        const { kind, value, status, meta } = step.value;
        const data = result(kind, value, answer, list);
        holder.answered = new Answered(data, status, answer?.headers, meta);
        observation?.done(status, meta);
        observation = undefined;
        return data;
      } else {
        observation?.failed(step.value);
        observation = undefined;
        throw step.value;
      }
    }
  } finally {
    // A method that ended otherwise (a step that threw) still ends its span.
    observation?.failed(undefined);
    release(stepper);
  }
}

// A finished call's handle is freed once the caller has its result: dropping the call's Rust values (a 20 KB params
// object is about 15 us of wasm) then runs after the caller's continuation, while the next request is on the wire,
// not before the result. In Node and Bun (their own `setImmediate`) the handles of a turn are freed in one batch after
// it; elsewhere (browsers, Deno, workerd, edge runtimes: Next.js's edge sandbox has a `setImmediate` that throws, and
// their timers belong to a request) at once, as before. A loop that never yields to the event loop (a `fetch` mock that
// answers in microtasks) never reaches that `setImmediate`: its handles are freed in batches of `MAX_PENDING_FREE`, so
// what it holds stays bounded.
const pendingFree = [];
const MAX_PENDING_FREE = 32;
let freeScheduled = false;
let deferFree =
  typeof setImmediate === "function" &&
  typeof globalThis.EdgeRuntime === "undefined" &&
  (typeof globalThis.process?.versions?.node === "string" || typeof globalThis.Bun !== "undefined");

function release(stepper) {
  if (deferFree) {
    pendingFree.push(stepper);
    if (pendingFree.length >= MAX_PENDING_FREE) {
      freePending();
      return;
    }
    if (freeScheduled) return;
    try {
      setImmediate(freeScheduledBatch);
      freeScheduled = true;
      return;
    } catch {
      deferFree = false;
      pendingFree.pop();
    }
  }
  stepper.free();
}

function freeScheduledBatch() {
  freeScheduled = false;
  freePending();
  makeSpareControllers();
}

function freePending() {
  for (const stepper of pendingFree.splice(0)) stepper.free();
}

/** A finished flow's data: from the last answer JS holds, or the value the core made. */
function result(kind, value, answer, list) {
  switch (kind) {
    // A JSON answer was parsed here (one that did not parse failed the flow).
    case ResultKind.DATA:
      return answer?.parsed ? answer.data : null;
    case ResultKind.LOCATION:
      return value;
    case ResultKind.BYTES:
      return answer?.bytes ?? new Uint8Array(0);
    case ResultKind.PAGE:
      return makePage({ ...value, items: pageItems(answer) }, list);
    // A live session: the answer as the core read it, its `url` the address the core found (JSON text it wrote).
    case ResultKind.SESSION:
      return JSON.parse(value);
    default:
      return undefined;
  }
}

/**
 * The items of an answer the core read as a page, as `pageForCore` parsed them when the answer arrived (as `fetch`
 * users parse it). A page the core accepted without them has no `data` member: no items.
 */
function pageItems(answer) {
  return Array.isArray(answer?.items) ? answer.items : [];
}

/** Waits `ms`; resolves `false` early when `signal` fires. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    let unlisten;
    const timer = setTimeout(() => {
      unlisten?.();
      resolve(true);
    }, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
    if (signal) {
      unlisten = whenAborted(signal, () => {
        clearTimeout(timer);
        resolve(false);
      });
    }
  });
}

// The callbacks waiting on each caller's signal (attempts and pauses of every call it was given to), behind one
// "abort" listener of ours per signal: a signal shared by many concurrent calls (one request's signal for its
// fan-out) is normal use, and Node 20 warns from the 11th listener on one signal ("MaxListenersExceededWarning:
// Possible EventTarget memory leak detected"; Node 22 and later do not). The listener is removed when its last
// callback is.
const signalWaiters = new WeakMap();

/**
 * Calls `callback` once when `signal` fires "abort"; returns the function that stops waiting. A value that is not an
 * object (or has no `addEventListener`) is never waited on, as before.
 */
function whenAborted(signal, callback) {
  if ((typeof signal !== "object" && typeof signal !== "function") || signal === null) return undefined;
  let waiters = signalWaiters.get(signal);
  if (!waiters) {
    const callbacks = new Set();
    const onAbort = () => {
      signalWaiters.delete(signal);
      for (const waiter of callbacks) waiter();
    };
    if (typeof signal.addEventListener !== "function") return undefined;
    signal.addEventListener("abort", onAbort, { once: true });
    waiters = { callbacks, onAbort };
    signalWaiters.set(signal, waiters);
  }
  const { callbacks } = waiters;
  callbacks.add(callback);
  return () => {
    if (!callbacks.delete(callback) || callbacks.size > 0 || signalWaiters.get(signal) !== waiters) return;
    signalWaiters.delete(signal);
    signal.removeEventListener?.("abort", waiters.onAbort);
  };
}
