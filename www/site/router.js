// The page's stand-in network for the examples: requests and sockets to an origin a stand-in serves (the page's
// emulator at https://emulator.test, a `node:http` server "listening" on 127.0.0.1:PORT, an emulator of
// `startEmulator`) are answered in the page; every other request goes to the network as it came.

/** The browser's own `fetch` and `WebSocket`, as they were before the runner replaced the globals. */
export const realFetch = globalThis.fetch.bind(globalThis);
export const RealWebSocket = globalThis.WebSocket;

/** The site's root URL (every page names it in `<meta name="docauto-root">`). */
export const siteRoot = new URL(document.querySelector('meta[name="docauto-root"]')?.content ?? "./", location.href);

const handlers = new Map(); // origin -> (input, init) => Promise<Response>
const sockets = new Map(); // origin -> WebSocket class
let pageBackend = null;

/** The http(s) origin of a URL, with ws: as http: and wss: as https:. */
function originOf(url) {
  const u = new URL(url, location.href);
  const scheme = u.protocol === "wss:" ? "https:" : u.protocol === "ws:" ? "http:" : u.protocol;
  return `${scheme}//${u.host}`;
}

/** Serves `origin` in the page; returns the function that stops it. */
export function serve(origin, handler, WebSocketClass) {
  const key = originOf(origin);
  handlers.set(key, handler);
  if (WebSocketClass) sockets.set(key, WebSocketClass);
  return () => {
    if (handlers.get(key) === handler) handlers.delete(key);
    if (WebSocketClass && sockets.get(key) === WebSocketClass) sockets.delete(key);
  };
}

/**
 * The server of a page example (`fetch("/session")` from the page's own origin): every request to this page's origin
 * outside the site's own files goes to `handler` until `setPageBackend(null)`.
 */
export function setPageBackend(handler) {
  pageBackend = handler;
}

let port = 41000;
/** A port number for a stand-in server that asked for any free one. */
export const freePort = () => port++;

function handlerFor(url) {
  const key = originOf(url);
  const served = handlers.get(key);
  if (served) return served;
  if (pageBackend && key === location.origin) {
    const path = new URL(url, location.href).pathname;
    const own = ["pkg/", "assets/", "samples/", "playground/"].some((dir) => path.startsWith(new URL(dir, siteRoot).pathname));
    if (!own && !path.endsWith(".html")) return pageBackend;
  }
  return null;
}

/** `fetch` of the page while examples run. */
export function routedFetch(input, init) {
  let url;
  try {
    url = input instanceof Request ? input.url : String(input instanceof URL ? input.href : input);
  } catch {
    return realFetch(input, init);
  }
  const handler = handlerFor(url);
  if (!handler) return realFetch(input, init);
  try {
    return Promise.resolve(handler(input, init));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** `WebSocket` of the page while examples run: a socket to a served origin is the stand-in's own socket. */
export function RoutedWebSocket(url, protocols) {
  if (!new.target) throw new TypeError("Failed to construct 'WebSocket': Please use the 'new' operator");
  const Served = sockets.get(originOf(url));
  return Served ? new Served(url, protocols) : new RealWebSocket(url, protocols);
}
RoutedWebSocket.prototype = RealWebSocket.prototype;
for (const [k, v] of Object.entries({ CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 })) Object.defineProperty(RoutedWebSocket, k, { value: v });
