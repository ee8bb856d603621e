// WebKit, the engine of Safari and of every iOS browser: Debian's WebKitGTK MiniBrowser, driven over WebDriver
// classic by `WebKitWebDriver` under an Xvfb display (WebKitGTK has no headless mode). Both are started here, on a
// display and a loopback port the system hands out, and stopped by their own PIDs.
//
// The client is our own (plain `fetch` to the driver; no npm package): the pages it drives answer the subset of
// Playwright's `Page` API that the browser suites use (`goto`, `evaluate`, `waitForFunction`, `waitForSelector`,
// `click`, `fill`, `textContent`, `locator`, `keyboard.press`, `screenshot`, ...), so the suites run the very same
// page-side tests in WebKit as in Chromium. Playwright's selector extensions that the suites use are understood:
// `a >> b` (b inside a), `>> nth=N` and `>> text=...`.
//
// What WebDriver classic does not have: page errors and console messages (`on("pageerror")` and `on("console")`
// are accepted and never fire; a page that does not finish is reported with the start of its text instead).
// Requests are observed only with `launchWebKit({ record: true })`, through a recording HTTP proxy of ours that the
// browser is told to use (`request` and `response` events with url, headers and status).
//
// Capabilities: `args` replaces the driver's default arguments, so `--automation` stays in it; mock capture devices
// give three microphones playing a tone, permission granted without a prompt; `--autoplay-policy=allow` unless
// `autoplay: "default"` is asked for (WebKit's own policy: an AudioContext runs only after a user gesture or once
// capture started).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { freePort } from "./common.mjs";

export const WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver";
export const XVFB = "/usr/bin/Xvfb";

/** The MiniBrowser of Debian's `webkit2gtk-driver` (`/usr/lib/<multiarch>/webkit2gtk-4.1/MiniBrowser`). */
export function miniBrowser() {
  for (const dir of readdirSync("/usr/lib")) {
    const path = `/usr/lib/${dir}/webkit2gtk-4.1/MiniBrowser`;
    if (existsSync(path)) return path;
  }
  throw new Error("no MiniBrowser under /usr/lib/*/webkit2gtk-4.1: cargo xtask install installs webkit2gtk-driver");
}

/** The element key of WebDriver's JSON (an element reference is `{ [ELEMENT]: id }`). */
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

/** Ends `child` (its own PID only): SIGTERM, then SIGKILL after `graceMs`; resolves once it exited. */
function stopProcess(child, graceMs = 3000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Starts Xvfb on a free display (`-displayfd`: the server picks the first free number and prints it); resolves to
 * `{ display, stop() }` with `display` like ":3".
 */
export async function startXvfb() {
  if (!existsSync(XVFB)) throw new Error(`${XVFB} is missing: cargo xtask install installs xvfb`);
  const args = ["-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-noreset"];
  const child = owned(spawn(XVFB, args, { stdio: ["ignore", "pipe", "ignore"] }));
  const display = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("Xvfb reported no display in 20 s")), 20_000);
    child.stdout.on("data", (d) => {
      out += d;
      const number = out.match(/^(\d+)\n/)?.[1];
      if (number === undefined) return;
      clearTimeout(timer);
      resolve(`:${number}`);
    });
    child.on("error", (e) => reject(new Error(`Xvfb: ${e.message}`)));
    child.on("exit", (code) => reject(new Error(`Xvfb exited (${code}) before it reported a display`)));
  }).catch(async (e) => {
    await stopProcess(child);
    throw e;
  });
  return { display, stop: () => stopProcess(child) };
}

// The processes started here, killed (by PID) if this process exits without stopping them (a suite that threw):
// WebKitWebDriver's MiniBrowser then loses its X display and ends too.
const children = new Set();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** `child`, killed with this process unless it ended first. */
function owned(child) {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Starts WebKitWebDriver on `display`; resolves to `{ url, stop() }` once it answers `/status`. */
async function startDriver(display) {
  if (!existsSync(WEBKIT_DRIVER)) throw new Error(`${WEBKIT_DRIVER} is missing: cargo xtask install installs webkit2gtk-driver`);
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const env = { ...process.env, DISPLAY: display };
    delete env.WAYLAND_DISPLAY;
    // It prints nothing when ready: its /status answers.
    const child = owned(spawn(WEBKIT_DRIVER, ["--host=127.0.0.1", `--port=${port}`], { env, stdio: ["ignore", "pipe", "pipe"] }));
    let out = ""; // the last 4 KB, for an error message
    child.stdout.on("data", (d) => (out = (out + d).slice(-4096)));
    child.stderr.on("data", (d) => (out = (out + d).slice(-4096)));
    child.on("error", (e) => (out += String(e)));
    const url = `http://127.0.0.1:${port}`;
    const end = Date.now() + 10_000;
    for (;;) {
      const ok = await fetch(`${url}/status`).then((r) => r.ok, () => false);
      if (ok) return { url, stop: () => stopProcess(child) };
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await stopProcess(child);
    // The port went to someone else between freePort() and the driver's bind: take another.
    if (tries >= 2) throw new Error(`WebKitWebDriver did not answer /status on port ${port}: ${out.slice(-1000)}`);
  }
}

/** One WebDriver command; resolves to its `value`, rejects with the driver's error and message. */
async function command(base, method, path, body) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json; charset=utf-8" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`WebDriver ${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
  }
  if (!r.ok || json?.value?.error) {
    const e = new Error(`WebDriver ${method} ${path}: ${json?.value?.error ?? r.status}: ${json?.value?.message ?? text.slice(0, 300)}`);
    e.webdriverError = json?.value?.error;
    throw e;
  }
  return json.value;
}

/**
 * A recording HTTP proxy on 127.0.0.1 for plain `http:` and `ws:` (the suites' servers are loopback, no TLS):
 * requests are forwarded as they came, a WebSocket's upgrade request then passes bytes both ways.
 * `onRequest({ url, method, headers })` sees each request, `onResponse({ url, status })` each plain answer. Resolves
 * to `{ port, close() }`.
 */
async function startRecordingProxy(onRequest, onResponse) {
  const server = createServer((req, res) => {
    const url = req.url;
    onRequest({ url, method: req.method, headers: { ...req.headers } });
    let target;
    try {
      target = new URL(url);
    } catch {
      res.writeHead(400).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    const upstream = httpRequest(
      { host: target.hostname, port: target.port || 80, method: req.method, path: target.pathname + target.search, headers },
      (up) => {
        onResponse({ url, status: up.statusCode });
        res.writeHead(up.statusCode, up.rawHeaders);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  // A WebSocket through the proxy: its upgrade request (absolute URL) goes on as it came, then bytes both ways.
  server.on("upgrade", (req, socket, head) => {
    onRequest({ url: req.url, method: req.method, headers: { ...req.headers } });
    let target;
    try {
      target = new URL(req.url);
    } catch {
      socket.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 80), target.hostname, () => {
      let lines = `${req.method} ${target.pathname}${target.search} HTTP/1.1\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        if (req.rawHeaders[i].toLowerCase() !== "proxy-connection") lines += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
      }
      upstream.write(`${lines}\r\n`);
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
    socket.on("close", () => upstream.destroy());
    upstream.on("close", () => socket.destroy());
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: server.address().port,
    close: () => {
      server.closeAllConnections?.();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/**
 * Starts Xvfb, WebKitWebDriver and a MiniBrowser session. `autoplay`: "allow" (default: an AudioContext runs without
 * a user gesture, as Chromium's and Firefox's test flags give) or "default" (WebKit's own policy, as Safari ships).
 * `record`: send the browser's requests through a recording proxy (`context.on("request" | "response")`).
 * Resolves to a browser with `newPage()`, `newContext()` and `close()`.
 */
export async function launchWebKit({ autoplay = "allow", record = false } = {}) {
  const started = [];
  const cleanup = async () => {
    for (const stop of started.reverse()) await stop().catch(() => {});
  };
  try {
    const xvfb = await startXvfb();
    started.push(xvfb.stop);
    const driver = await startDriver(xvfb.display);
    started.push(driver.stop);
    const listeners = { request: [], response: [] };
    const capabilities = {
      "webkitgtk:browserOptions": {
        binary: miniBrowser(),
        args: [
          "--automation",
          "--enable-mock-capture-devices=true",
          ...(autoplay === "allow" ? ["--autoplay-policy=allow"] : []),
        ],
      },
      timeouts: { script: 600_000, pageLoad: 60_000, implicit: 0 },
      unhandledPromptBehavior: "dismiss",
    };
    if (record) {
      const proxy = await startRecordingProxy(
        (r) => listeners.request.forEach((f) => f(requestView(r))),
        (r) => listeners.response.forEach((f) => f(responseView(r))),
      );
      started.push(proxy.close);
      capabilities.proxy = { proxyType: "manual", httpProxy: `127.0.0.1:${proxy.port}`, noProxy: [] };
    }
    const session = await command(driver.url, "POST", "/session", { capabilities: { alwaysMatch: capabilities } });
    const base = `${driver.url}/session/${session.sessionId}`;
    started.push(() => command(driver.url, "DELETE", `/session/${session.sessionId}`));
    return new WebKitBrowser(base, listeners, record, cleanup);
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** What Playwright's `request` event gives, for the fields the suites read. */
function requestView({ url, method, headers }) {
  return { url: () => url, method: () => method, headers: () => headers };
}

function responseView({ url, status }) {
  return { url: () => url, status: () => status };
}

class WebKitBrowser {
  constructor(base, listeners, recording, cleanup) {
    this.base = base;
    this.recording = recording;
    this.statuses = new Map(); // url -> the status of its last answer, seen by the recording proxy
    if (recording) listeners.response.push((r) => this.statuses.set(r.url(), r.status()));
    this.listeners = listeners;
    this.cleanup = cleanup;
    this.current = null; // the page the session is switched to (its window, and its frame if it has one)
    this.pages = [];
    this.queue = Promise.resolve();
  }

  /**
   * Runs `fn` alone on the session, switched to `page` first: its window, then its frame (commands of two pages never
   * interleave; switching windows leaves any frame).
   */
  run(page, fn) {
    const run = this.queue.then(async () => {
      if (page && this.current !== page) {
        this.current = null;
        await command(this.base, "POST", "/window", { handle: page.handle });
        if (page.frame) await command(this.base, "POST", "/frame", { id: page.frame });
        this.current = page;
      }
      return fn();
    });
    this.queue = run.catch(() => {});
    return run;
  }

  /** The first page is the session's own window; later pages are new windows. */
  async newPage() {
    let page;
    if (this.pages.length === 0) {
      page = new WebKitPage(this, await this.run(null, () => command(this.base, "GET", "/window")));
      this.current = page;
    } else {
      // From the first page's window, which stays open: the command needs a current window.
      const made = await this.run(this.pages[0], () => command(this.base, "POST", "/window/new", { type: "window" }));
      page = new WebKitPage(this, made.handle);
    }
    this.pages.push(page);
    return page;
  }

  /** A Playwright-like context: its pages get `viewport`; `on("request" | "response")` needs `record: true`. */
  async newContext({ viewport } = {}) {
    const browser = this;
    return {
      async newPage() {
        const page = await browser.newPage();
        if (viewport) await page.setViewportSize(viewport);
        return page;
      },
      on(event, fn) {
        if (!browser.recording || !(event in browser.listeners)) throw new Error(`WebKit: no "${event}" events here`);
        browser.listeners[event].push(fn);
      },
    };
  }

  async close() {
    await this.queue;
    await this.cleanup();
  }
}

// Page-side helpers, sent as source text with every command that needs them.
const PAGE_HELPERS = String.raw`
const __resolveAll = (selector) => {
  let scopes = [document];
  for (const raw of selector.split(" >> ")) {
    const part = raw.trim();
    const found = [];
    if (part.startsWith("nth=")) {
      const n = Number(part.slice(4));
      const el = n < 0 ? scopes[scopes.length + n] : scopes[n];
      scopes = el ? [el] : [];
      continue;
    }
    if (part.startsWith("text=")) {
      const want = part.slice(5).replace(/^"(.*)"$/, "$1").toLowerCase();
      const norm = (s) => (s ?? "").replace(/\s+/g, " ").trim().toLowerCase();
      for (const scope of scopes) {
        const all = scope === document ? [...document.querySelectorAll("*")] : [scope, ...scope.querySelectorAll("*")];
        for (const el of all) {
          if (!norm(el.textContent).includes(want)) continue;
          if ([...el.children].some((c) => norm(c.textContent).includes(want))) continue;
          if (!found.includes(el)) found.push(el);
        }
      }
    } else {
      for (const scope of scopes) for (const el of scope.querySelectorAll(part)) if (!found.includes(el)) found.push(el);
    }
    scopes = found;
  }
  return scopes.filter((s) => s !== document);
};
const __visible = (el) => {
  if (!el.isConnected || el.getClientRects().length === 0) return false;
  const style = getComputedStyle(el);
  return style.visibility !== "hidden" && style.display !== "none";
};
`;

/**
 * WebKitWebDriver turns element references back into elements only among a script's top-level arguments: the
 * references inside `arg` travel as arguments after it, and `{ [SLOT]: i }` marks where each goes back.
 */
const SLOT = "__webkitElementSlot";
const ELEMENTS_BACK = `
const __back = (v, els) => {
  if (Array.isArray(v)) return v.map((x) => __back(x, els));
  if (v && typeof v === "object") {
    if ("${SLOT}" in v) return els[v["${SLOT}"]];
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, __back(x, els)]));
  }
  return v;
};`;

/** `arg` with its element references replaced by slots, and the references in slot order. */
function slotted(arg, refs = []) {
  if (Array.isArray(arg)) return [arg.map((x) => slotted(x, refs)[0]), refs];
  if (arg && typeof arg === "object") {
    if (typeof arg[ELEMENT] === "string") {
      refs.push(arg);
      return [{ [SLOT]: refs.length - 1 }, refs];
    }
    return [Object.fromEntries(Object.entries(arg).map(([k, x]) => [k, slotted(x, refs)[0]])), refs];
  }
  return [arg ?? null, refs];
}

/** Runs `fn(arg)` in the page (a function, or its source text); resolves to its (awaited) result. */
const EVALUATE = `${PAGE_HELPERS}${ELEMENTS_BACK}
const done = arguments[arguments.length - 1];
const source = arguments[0];
const arg = __back(arguments[1], Array.prototype.slice.call(arguments, 2, arguments.length - 1));
let fn;
try { fn = (0, eval)("(" + source + ")"); } catch (e) { done({ thrown: "the function does not parse: " + e }); return; }
Promise.resolve().then(() => (typeof fn === "function" ? fn(arg, __resolveAll, __visible) : fn)).then(
  (value) => done({ value: value === undefined ? null : value }),
  (e) => done({ thrown: e instanceof Error ? e.name + ": " + e.message : String(e) }),
);`;

/** Polls `fn(arg)` in the page every `polling` ms until it is truthy (its value) or `timeout` ms passed. */
const WAIT = `${PAGE_HELPERS}${ELEMENTS_BACK}
const done = arguments[arguments.length - 1];
const [source, , timeout, polling] = arguments;
const arg = __back(arguments[1], Array.prototype.slice.call(arguments, 4, arguments.length - 1));
let fn;
try { fn = (0, eval)("(" + source + ")"); } catch (e) { done({ thrown: "the function does not parse: " + e }); return; }
const end = Date.now() + timeout;
const poll = async () => {
  let value;
  try { value = await fn(arg, __resolveAll, __visible); } catch (e) { done({ thrown: e instanceof Error ? e.name + ": " + e.message : String(e) }); return; }
  if (value) { done({ value }); return; }
  if (Date.now() > end) { done({ timedOut: true }); return; }
  setTimeout(poll, polling);
};
poll();`;

const KEYS = {
  Tab: "\uE004",
  Enter: "\uE007",
  Escape: "\uE00C",
  Space: "\uE00D",
  ArrowLeft: "\uE012",
  ArrowUp: "\uE013",
  ArrowRight: "\uE014",
  ArrowDown: "\uE015",
  Backspace: "\uE003",
};

class WebKitPage {
  constructor(browser, handle) {
    this.browser = browser;
    this.handle = handle;
    this.timeout = 30_000;
    this.keyboard = {
      press: (key) =>
        this.cmd("POST", "/actions", {
          actions: [
            {
              type: "key",
              id: "keyboard",
              actions: [
                { type: "keyDown", value: KEYS[key] ?? key },
                { type: "keyUp", value: KEYS[key] ?? key },
              ],
            },
          ],
        }),
    };
  }

  cmd(method, path, body) {
    return this.browser.run(this, () => command(this.browser.base, method, path, body));
  }

  /**
   * `request` and `response` (with `launchWebKit({ record: true })`; the browser's, not only this page's). Page
   * errors and console messages are not part of WebDriver classic: accepted, never fired.
   */
  on(event, fn) {
    if (event === "request" || event === "response") {
      if (!this.browser.recording) throw new Error(`WebKit: "${event}" events need launchWebKit({ record: true })`);
      this.browser.listeners[event].push(fn);
    }
  }

  setDefaultTimeout(ms) {
    this.timeout = ms;
  }

  /**
   * Navigates and waits for the load event; resolves to `{ status() }`: the answer's status as the recording proxy saw
   * it (null without `record: true`: WebDriver classic does not say, nor does WebKit's navigation timing).
   */
  async goto(url) {
    this.browser.statuses.delete(url);
    if (this.framedViewport) {
      await this.gotoFramed(url);
    } else {
      await this.cmd("POST", "/url", { url });
    }
    const status = this.browser.statuses.get(url) ?? null;
    return { status: () => status };
  }

  /**
   * A viewport narrower than MiniBrowser's window allows (its toolbar keeps the page at least 447 px wide here): the
   * page loads in an iframe of exactly that size in a document of its own origin (so it stays a secure context), and
   * every later command runs inside that frame. The top document is the origin's answer to a path nothing serves.
   */
  async gotoFramed(url) {
    const { width, height } = this.framedViewport;
    this.frame = null;
    this.browser.current = null;
    await this.cmd("POST", "/url", { url: new URL("/.webkit-frame-host", url).href });
    const frame = await this.evaluate(
      ([src, w, h]) =>
        new Promise((resolve, reject) => {
          document.documentElement.innerHTML = "<body style='margin:0'></body>";
          const f = document.createElement("iframe");
          f.style.cssText = `border:0;display:block;width:${w}px;height:${h}px`;
          f.onload = () => resolve(f);
          f.onerror = () => reject(new Error("the frame did not load"));
          f.src = src;
          document.body.append(f);
        }),
      [url, width, height],
    );
    this.frame = frame;
    this.browser.current = null; // the next command enters the frame
  }

  url() {
    return this.cmd("GET", "/url");
  }

  async evaluate(fn, arg) {
    const [value, refs] = slotted(arg);
    const out = await this.cmd("POST", "/execute/async", { script: EVALUATE, args: [String(fn), value, ...refs] });
    if (out && "thrown" in out) throw new Error(`in the page: ${out.thrown}`);
    return out?.value;
  }

  /** Playwright's signature: `(fn, arg, { timeout, polling })`; resolves to the truthy value. */
  async waitForFunction(fn, arg, { timeout = this.timeout, polling = 100 } = {}) {
    const [value, refs] = slotted(arg);
    const out = await this.cmd("POST", "/execute/async", {
      script: WAIT,
      args: [String(fn), value, timeout, typeof polling === "number" ? polling : 100, ...refs],
    });
    if (out && "thrown" in out) throw new Error(`in the page: ${out.thrown}`);
    if (!out || out.timedOut) {
      const text = await this.evaluate(() => document.body?.innerText?.slice(0, 300) ?? "").catch(() => "");
      throw new Error(`waitForFunction timed out after ${timeout} ms (page text: ${JSON.stringify(text)})`);
    }
    return out.value;
  }

  /** Waits until `selector` matches a visible element (`state: "attached"`: any element). */
  async waitForSelector(selector, { timeout = this.timeout, state = "visible" } = {}) {
    try {
      await this.waitForFunction(
        ([sel, visible], all, shown) => all(sel).some((el) => !visible || shown(el)),
        [selector, state === "visible"],
        { timeout },
      );
    } catch (e) {
      throw new Error(`waitForSelector("${selector}"): ${e.message}`);
    }
  }

  /** A WebDriver reference to the first element `selector` matches once it is visible. */
  async element(selector, { timeout = this.timeout } = {}) {
    await this.waitForSelector(selector, { timeout });
    return this.evaluate(([sel], all, shown) => all(sel).find(shown), [selector]);
  }

  /** A real click (WebDriver's element click: a user gesture for the page), on the first visible match. */
  async click(selector, options = {}) {
    const ref = await this.element(selector, options);
    await this.waitForFunction(([el]) => !el.disabled, [ref], { timeout: options.timeout ?? this.timeout });
    await this.cmd("POST", `/element/${ref[ELEMENT]}/click`, {});
  }

  /** Sets a field's value as typing would end (an `input` and a `change` event). */
  async fill(selector, value) {
    const ref = await this.element(selector);
    await this.evaluate(
      ([el, text]) => {
        el.focus();
        const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
        Object.getOwnPropertyDescriptor(proto, "value").set.call(el, text);
        el.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText" }));
        el.dispatchEvent(new Event("change", { bubbles: true }));
      },
      [ref, value],
    );
  }

  /** Runs `fn(element)` on the first element `selector` matches (waiting until one exists). */
  async onFirst(selector, fn, extra) {
    await this.waitForSelector(selector, { state: "attached" });
    return this.evaluate(
      ([sel, source, more], all) => (0, eval)(`(${source})`)(all(sel)[0], more),
      [selector, String(fn), extra ?? null],
    );
  }

  textContent(selector) {
    return this.onFirst(selector, (el) => el.textContent);
  }

  inputValue(selector) {
    return this.onFirst(selector, (el) => el.value);
  }

  isDisabled(selector) {
    return this.onFirst(selector, (el) => Boolean(el.disabled));
  }

  getAttribute(selector, name) {
    return this.onFirst(selector, (el, n) => el.getAttribute(n), name);
  }

  /** Every element `selector` matches, as WebDriver references. */
  $$(selector) {
    return this.evaluate(([sel], all) => all(sel), [selector]);
  }

  $$eval(selector, fn) {
    return this.evaluate(([sel, source], all) => (0, eval)(`(${source})`)(all(sel)), [selector, String(fn)]);
  }

  /** A Playwright-like locator: `locator(inner)` narrows it, `click()` and `selectOption(value)` act on it. */
  locator(selector) {
    const page = this;
    return {
      selector,
      locator: (inner) => page.locator(`${selector} >> ${inner}`),
      click: (options) => page.click(selector, options),
      async selectOption(value) {
        const ref = await page.element(selector);
        const ok = await page.evaluate(
          ([el, v]) => {
            const option = [...el.options].find((o) => o.value === v || o.label === v);
            if (!option) return false;
            el.value = option.value;
            el.dispatchEvent(new Event("input", { bubbles: true }));
            el.dispatchEvent(new Event("change", { bubbles: true }));
            return true;
          },
          [ref, value],
        );
        if (!ok) throw new Error(`selectOption: no option "${value}" in ${selector}`);
      },
    };
  }

  /**
   * The visible area as PNG, written to `path`: the window's viewport, or the frame's for a framed viewport.
   * `fullPage` is not honoured: WebKit's element screenshot of a page taller than the window paints only what is in
   * view (the rest comes out black).
   */
  async screenshot({ path } = {}) {
    let png;
    if (this.frame) {
      const html = await this.evaluate(() => document.documentElement);
      png = await this.cmd("GET", `/element/${html[ELEMENT]}/screenshot`);
    } else {
      png = await this.cmd("GET", "/screenshot");
    }
    const bytes = Buffer.from(png, "base64");
    if (path) writeFileSync(path, bytes);
    return bytes;
  }

  /**
   * Resizes the window so that the page's viewport is `width` x `height` CSS pixels; narrower than the window can
   * be, the next `goto` loads the page into a frame of that size (`gotoFramed`).
   */
  async setViewportSize({ width, height }) {
    this.framedViewport = null;
    for (let i = 0; i < 3; i++) {
      const rect = await this.cmd("GET", "/window/rect");
      const [w, h] = await this.evaluate(() => [window.innerWidth, window.innerHeight]);
      if (w === width && h === height) return;
      await this.cmd("POST", "/window/rect", { width: rect.width + width - w, height: rect.height + height - h });
    }
    const [w, h] = await this.evaluate(() => [window.innerWidth, window.innerHeight]);
    if (w !== width || h !== height) this.framedViewport = { width, height };
  }

  /** Minimizes the window: the page's `visibilityState` becomes "hidden" (as when a tab goes to the background). */
  async hide() {
    this.rect = await this.cmd("GET", "/window/rect");
    await this.cmd("POST", "/window/minimize", {});
  }

  /** Restores the window `hide()` minimized, at its size: the page is "visible" again. */
  async show() {
    const { width, height } = this.rect ?? (await this.cmd("GET", "/window/rect"));
    await this.cmd("POST", "/window/rect", { width, height });
  }

  async close() {
    const i = this.browser.pages.indexOf(this);
    if (i === 0) return; // the session's own window closes with the session
    this.browser.pages.splice(i, 1);
    await this.cmd("DELETE", "/window");
    this.browser.current = null;
  }
}
