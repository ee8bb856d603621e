// Promise shapes of the client (plain ESM, no dependencies): the awaitable `APIPromise` with `withResponse()`, and
// the cursor `Page` that is async-iterable over every item of every page. The wasm side does the I/O; this file
// only shapes its results.

/**
 * Turns a promise of an `Answered` into a promise of its `data` carrying `withResponse()`.
 * @param {Promise<Answered>} inner
 */
export function apiPromise(inner) {
  const data = inner.then(pickData);
  data[INNER] = inner;
  data.withResponse = withResponseMethod;
  return data;
}

const INNER = Symbol("docauto.inner");

/** `withResponse()` of an `APIPromise`: `{ data, response }`. */
function withResponseMethod() {
  // The caller observes the answer instead: the data promise's rejection is not theirs to handle any more.
  this.catch(ignore);
  return this[INNER].then(plain);
}

const pickData = (answered) => answered.data;
const plain = (answered) => answered.plain();
const ignore = () => {};

/**
 * An `apiPromise` of a page that is also async-iterable over every item of every page.
 * @param {Promise<{data: object, response: object}>} inner
 */
export function pagePromise(inner) {
  const promise = apiPromise(inner);
  Object.defineProperty(promise, Symbol.asyncIterator, {
    value() {
      return iterate(promise);
    },
  });
  return promise;
}

async function* iterate(first) {
  let page = await first;
  while (page) {
    yield* page.data;
    page = await page.nextPage();
  }
}

/**
 * A page of a cursor list.
 * @param {{data?: unknown[], has_more?: boolean, hasMore?: boolean, cursor?: string | null}} body
 * @param {string | undefined} nextCursor the cursor of the next page, undefined at the end
 * @param {{list(params: object, options?: object): Promise<object>}} resource the resource whose `list` made the page
 * @param {object | undefined} params the list parameters (the cursor is replaced)
 * @param {object | undefined} options the call options, reused for the next pages
 */
export function makePage(body, nextCursor, resource, params, options) {
  const page = {
    object: "list",
    data: Array.isArray(body?.data) ? body.data : [],
    hasMore: Boolean(body?.has_more ?? body?.hasMore),
    cursor: typeof body?.cursor === "string" ? body.cursor : null,
    hasNextPage() {
      return nextCursor !== undefined;
    },
    nextPage() {
      return nextCursor === undefined ? Promise.resolve(null) : resource.list({ ...(params ?? {}), cursor: nextCursor }, options);
    },
    [Symbol.asyncIterator]() {
      return iterate(Promise.resolve(page));
    },
  };
  return page;
}

// Request and response plumbing: one boundary crossing each instead of one per header.

/** Longest delay `setTimeout` honours (a longer one fires at once in Node and browsers). */
const MAX_TIMER_MS = 2_147_483_647;

function describe(error) {
  let out = typeof error === "string" ? error : String(error?.message ?? "fetch failed");
  const cause = error && typeof error === "object" ? error.cause : undefined;
  const detail = cause?.code ?? cause?.message;
  if (typeof detail === "string" && detail) out += ` (${detail})`;
  return out;
}

/**
 * One HTTP attempt: `fetch`, then the body, under a timeout and the caller's signal. Retries, sleeps and every
 * decision stay in the wasm driver; this only performs the I/O, with one boundary crossing per attempt.
 *
 * `mode` says what to do with a 2xx body: 0 read it as text, 1 read its bytes, 2 parse it as JSON here (the data
 * never enters wasm; a body that does not parse is handed over as text, for the core to report). Resolves to
 * `{ status, head, headers, text, bytes, data, parsed }`: `head` is header text (`name\nvalue\n...`, lower-case
 * names) for the core, every header except after a JSON parse here, where the core only reads the request id, the
 * replay flag and `Location`; `headers` is the response's own `Headers`, turned into a plain object only if the
 * caller asks for `withResponse()`. Rejects with `{ kind: "timeout" | "aborted" | "connection", message }`.
 *
 * Timeouts: with a caller's `signal`, the attempt runs under its own `AbortController`, which either the signal or
 * the timer aborts. Without one, no signal is handed to `fetch` (each costs the runtime an abort listener, about 5 %
 * of a loopback call in Node): the timer settles the attempt as timed out on time, and the abandoned request's
 * body, if it ever arrives, is cancelled, which closes its connection. Until then the request occupies a connection
 * (Node's fetch gives up on a silent server after 300 s by itself).
 * @param {((url: string, init: object) => Promise<Response>) | undefined} fetchFn the caller's fetch, or the global
 */
export function attempt(fetchFn, url, method, headerLines, body, redirect, timeoutMs, signal, mode) {
  return new Promise((resolve, reject) => {
    const controller = signal && typeof AbortController === "function" ? new AbortController() : undefined;
    let settled = false;
    let timer;
    const onAbort = () => {
      controller?.abort();
      finish(reject, { kind: "aborted", message: "aborted" });
    };
    const finish = (settle, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (signal) signal.removeEventListener?.("abort", onAbort);
      settle(value);
    };
    if (signal) {
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener?.("abort", onAbort);
    }
    timer = setTimeout(() => {
      controller?.abort();
      finish(reject, { kind: "timeout", message: "timeout" });
    }, Math.min(Math.max(timeoutMs, 1), MAX_TIMER_MS));
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
      finish(reject, { kind: "connection", message: describe(e) });
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
        if (ok && mode === 1) {
          return response.arrayBuffer().then((buffer) => {
            finish(resolve, answer(status, headerText(response.headers), response.headers, "", new Uint8Array(buffer)));
          });
        }
        return response.text().then((raw) => {
          const text = String(raw);
          if (ok && mode === 2) {
            let data = null;
            let parsed = true;
            try {
              // An empty body is `null`, as the core reads it.
              if (text.trim() !== "") data = JSON.parse(text);
            } catch {
              parsed = false;
            }
            if (parsed) {
              const result = answer(status, coreHeaderText(response.headers), response.headers, "", undefined);
              result.data = data;
              result.parsed = true;
              finish(resolve, result);
              return;
            }
          }
          finish(resolve, answer(status, headerText(response.headers), response.headers, text, undefined));
        });
      })
      .catch((e) => finish(reject, { kind: "connection", message: describe(e) }));
  });
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
  return { status, head, headers, text, bytes, data: undefined, parsed: false };
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

const CORE_HEADERS = ["x-request-id", "idempotent-replay", "location"];

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

/** A call's result: its data and what `withResponse()` shows of the answer (built only when asked). */
class Answered {
  constructor(data, status, headers, requestId, idempotentReplay) {
    this.data = data;
    this.status = status;
    this.headers = headers;
    this.requestId = requestId ?? null;
    this.idempotentReplay = idempotentReplay;
  }

  /** `{ data, response: { status, headers, requestId, idempotentReplay } }`, `headers` a plain object. */
  plain() {
    const response = {
      status: this.status,
      headers: headerObject(this.headers),
      requestId: this.requestId,
      idempotentReplay: this.idempotentReplay,
    };
    return { data: this.data, response };
  }
}

/** A call's result (`headers`: the answer's `Headers`, read only by `withResponse()`). */
export function withResponse(data, status, headers, requestId, idempotentReplay) {
  return new Answered(data, status, headers, requestId, idempotentReplay);
}

// The JS-driven path of a single call (`stepper.rs`): the wasm handle decides every step, this loop performs it.

/** A request to send (what `CallStepper.step()` returns to `drive`). */
export function sendStep(url, method, headers, body, redirect, timeoutMs, mode) {
  return { kind: 0, url, method, headers, body, redirect, timeoutMs, mode, value: undefined };
}

/** A pause before the next attempt. */
export function pauseStep(ms) {
  return { kind: 1, url: "", method: "", headers: "", body: undefined, redirect: "", timeoutMs: ms, mode: 0, value: undefined };
}

/** The end of the call: `{ data, response }`, or the error to throw. */
export function endStep(ok, value) {
  return { kind: ok ? 2 : 3, url: "", method: "", headers: "", body: undefined, redirect: "", timeoutMs: 0, mode: 0, value };
}

/**
 * Runs a `CallStepper` to its end: sends, pauses and checks the caller's signal where its steps say. Resolves to
 * `{ data, response }` or rejects with the `errors.js` class of the failure. The handle is freed at the end.
 */
export async function drive(stepper, fetchFn, signal) {
  try {
    for (;;) {
      const step = stepper.step();
      if (step.kind === 0) {
        if (signal?.aborted) {
          stepper.abort();
          continue;
        }
        const started = Date.now();
        let answer;
        try {
          answer = await attempt(fetchFn, step.url, step.method, step.headers, step.body, step.redirect, step.timeoutMs, signal, step.mode);
        } catch (failure) {
          stepper.onFailure(failure, Date.now() - started);
          continue;
        }
        stepper.onAnswer(answer, Date.now() - started);
      } else if (step.kind === 1) {
        if (!(await pause(step.timeoutMs, signal))) stepper.abort();
      } else if (step.kind === 2) {
        return step.value;
      } else {
        throw step.value;
      }
    }
  } finally {
    stepper.free();
  }
}

/** Waits `ms`; resolves `false` early when `signal` fires. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener?.("abort", onAbort);
      resolve(true);
    }, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
    signal?.addEventListener?.("abort", onAbort, { once: true });
  });
}
