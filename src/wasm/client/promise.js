// Promise shapes of the client (plain ESM, no dependencies): the awaitable `APIPromise` with `withResponse()`, and
// the cursor `Page` that is async-iterable over every item of every page. The wasm side does the I/O; this file
// only shapes its results.

/**
 * Turns a promise of `{ data, response }` into a promise of `data` carrying `withResponse()`.
 * @param {Promise<{data: unknown, response: object}>} inner
 */
export function apiPromise(inner) {
  const data = inner.then((r) => r.data);
  Object.defineProperty(data, "withResponse", {
    value() {
      // The caller observes `inner` instead: the data promise's rejection is not theirs to handle any more.
      data.catch(() => {});
      return inner;
    },
  });
  return data;
}

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
 * One HTTP attempt: `fetch`, then the body, under a timeout and the caller's signal. Resolves to
 * `{ status, headers, text, bytes? }` (headers as `name\nvalue\n...` text, lower-case names; `bytes` for a 2xx when
 * `wantBytes`), or rejects with `{ kind: "timeout" | "aborted" | "connection", message }`. Retries, sleeps and every
 * decision stay in the wasm driver; this only performs the I/O, with one boundary crossing per attempt.
 * @param {((url: string, init: object) => Promise<Response>) | undefined} fetchFn the caller's fetch, or the global
 */
export function attempt(fetchFn, url, method, headerLines, body, redirect, timeoutMs, signal, wantBytes) {
  return new Promise((resolve, reject) => {
    const controller = typeof AbortController === "function" ? new AbortController() : undefined;
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
      signal?.removeEventListener?.("abort", onAbort);
      settle(value);
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener?.("abort", onAbort);
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
      .then(async (response) => {
        if (!response || typeof response !== "object") throw new TypeError("fetch resolved to something that is not a Response");
        const status = Number(response.status) || 0;
        const lines = headerText(response);
        if (wantBytes && status >= 200 && status < 300) {
          const bytes = new Uint8Array(await response.arrayBuffer());
          finish(resolve, { status, headers: lines, text: "", bytes });
        } else {
          finish(resolve, { status, headers: lines, text: String(await response.text()) });
        }
      })
      .catch((e) => finish(reject, { kind: "connection", message: describe(e) }));
  });
}

/** A response's headers as `name\nvalue\n...` text, names in lower case (newlines inside values become spaces). */
function headerText(response) {
  let out = "";
  const headers = response?.headers;
  if (headers && typeof headers.forEach === "function") {
    headers.forEach((value, name) => {
      out += `${String(name).toLowerCase()}\n${String(value).replace(/[\r\n]/g, " ")}\n`;
    });
  }
  return out;
}

/** `{ data, response: { status, headers, requestId, idempotentReplay } }` from the header text. */
export function withResponse(data, status, text, requestId, idempotentReplay) {
  const headers = {};
  if (text) {
    const parts = text.split("\n");
    for (let i = 0; i + 1 < parts.length; i += 2) headers[parts[i]] = parts[i + 1];
  }
  return { data, response: { status, headers, requestId: requestId ?? null, idempotentReplay } };
}
