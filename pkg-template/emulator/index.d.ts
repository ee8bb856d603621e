// Types of `docauto/emulator`: the local emulator of the Document Automation service, compiled to WebAssembly. Every
// entry has this API; `startEmulator` listens only in Node, Deno and Bun (elsewhere it rejects with code
// `listen_unavailable`).

/**
 * An API key the emulator accepts: `"KEY[:ORG]"` (`KEY` alone is of `org_demo`; `KEY:` has no organization), or
 * `{ key, org }` (`org` left out: `org_demo`; `null`: no organization, every call answers 404 `org not found`).
 */
export type EmulatorKey = string | { key: string; org?: string | null };

/** The options of the emulator; each mirrors a flag of the `docauto-emulator` command. */
export interface EmulatorOptions {
  /** Accepted API keys (`--key`); default `["sk_test_docauto:org_demo"]`. The first is `apiKey`. */
  keys?: EmulatorKey[];
  /** A key sees only the agent runs it created (`--scope-keys`). */
  scopeKeys?: boolean;
  /** Requests per minute per organization (`--rate-limit`, default 67; the JWKS routes are exempt). */
  rateLimit?: number;
  /** Also accept `http://` webhook URLs on loopback (`--allow-http-webhooks`). */
  allowHttpWebhooks?: boolean;
  /** Multiplies every service delay (`--time-scale`, default 1; 0.01 makes a test fast). */
  timeScale?: number;
  /** Mounts the test control API under `/__emulator/` (`--control`). */
  control?: boolean;
  /** Extra agent definitions (`--agents`): the agent file shape, as objects or JSON text. */
  agents?: (Record<string, unknown> | string)[];
  /** The dispatch size budget of one run in bytes (`--dispatch-budget`, default 64 MiB). */
  dispatchBudget?: number;
  /** Start from this state: what `snapshot()` returned, or a native `--state` snapshot file's text. */
  snapshot?: string;
}

/**
 * Receives a webhook delivery instead of the network: a `POST` of the signed envelope to the endpoint's URL, with its
 * `x-svc-signature` header (your route handler as it is: a Next.js `POST(request)`, a Worker's `fetch`). A non-2xx
 * answer, a throw or no answer within 10 s is a failed attempt, retried on the service's ladder. `request.signal`
 * aborts at that timeout or when the emulator closes.
 */
export type DeliveryHandler = (request: Request) => Response | Promise<Response>;

/** `createEmulator`'s options. */
export interface InProcessEmulatorOptions extends EmulatorOptions {
  /**
   * The origin of the addresses the emulator hands out (uploads, downloads, envelopes, realtime sockets); default
   * `https://emulator.test`. An origin only: the routes are at its root.
   */
  baseUrl?: string;
  /** Every webhook delivery goes to this handler instead of the runtime's `fetch`, whatever the endpoint's host. */
  deliver?: DeliveryHandler;
}

/** `startEmulator`'s options. */
export interface StartEmulatorOptions extends EmulatorOptions {
  /** The port on 127.0.0.1; default a free one. */
  port?: number;
  /** Every webhook delivery goes to this handler instead of the runtime's `fetch`, whatever the endpoint's host. */
  deliver?: DeliveryHandler;
}

/**
 * A socket of `emulator.WebSocket`: the browser `WebSocket` interface, connected in-process to the emulator's realtime
 * route. The emulator sends text frames only.
 */
export interface EmulatorWebSocket extends EventTarget {
  readonly url: string;
  /** 0 connecting, 1 open, 2 closing, 3 closed. */
  readonly readyState: 0 | 1 | 2 | 3;
  /** Always 0: a frame is handed over at once. */
  readonly bufferedAmount: number;
  /** Always `""`: the emulator selects no subprotocol. */
  readonly protocol: string;
  readonly extensions: string;
  binaryType: "blob" | "arraybuffer";
  onopen: ((this: EmulatorWebSocket, event: Event) => unknown) | null;
  onmessage: ((this: EmulatorWebSocket, event: Event & { readonly data: string }) => unknown) | null;
  onerror: ((this: EmulatorWebSocket, event: Event) => unknown) | null;
  onclose:
    | ((this: EmulatorWebSocket, event: Event & { readonly code: number; readonly reason: string; readonly wasClean: boolean }) => unknown)
    | null;
  /** A text frame (string) or an audio frame (ArrayBuffer, typed array, DataView, Blob). */
  send(data: string | ArrayBuffer | ArrayBufferView | Blob): void;
  /** Throws `InvalidAccessError` for a code other than 1000 or 3000..4999, `SyntaxError` for a reason over 123 bytes. */
  close(code?: number, reason?: string): void;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSING: 2;
  readonly CLOSED: 3;
}

/** The class of `emulator.WebSocket`. */
export interface EmulatorWebSocketConstructor {
  /** Connects to `/v1/realtime/socket?ticket=...` of this emulator, whatever the URL's host. */
  new (url: string | URL, protocols?: string | string[]): EmulatorWebSocket;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSING: 2;
  readonly CLOSED: 3;
}

/** An emulator running in-process: no socket, in every runtime. */
export interface InProcessEmulator {
  /** The first accepted API key (`sk_test_docauto` by default). */
  readonly apiKey: string;
  /** The origin its addresses carry (`baseUrl`). */
  readonly url: string;
  /**
   * `fetch` served by the emulator: every route, whatever the URL's host, so upload and download addresses work too.
   * Pass it to `new DocAuto({ apiKey, baseUrl: url, fetch })` and `new WebhookVerifier({ baseUrl: url, fetch })`.
   * The realtime socket route answers 426 `websocket_unavailable` (connect with `WebSocket`).
   */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
  /**
   * A `WebSocket` class connected in-process to this emulator's realtime route: pass it as the `WebSocket` option of
   * `RealtimeTranscriber`, or use it as the browser's.
   */
  readonly WebSocket: EmulatorWebSocketConstructor;
  /** The state, in the native `--state` snapshot format (JSON text); `createEmulator({ snapshot })` starts from it. */
  snapshot(): string;
  /** Stops every timer, delivery and socket (open ones close with 1006); later calls reject with `emulator_closed`. */
  close(): Promise<void>;
}

/** An emulator listening on 127.0.0.1. */
export interface RunningEmulator {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The first accepted API key (`sk_test_docauto` by default). */
  readonly apiKey: string;
  /** The state, in the native `--state` snapshot format (JSON text). */
  snapshot(): string;
  /** Stops the server, its sockets, every timer and delivery. */
  close(): Promise<void>;
}

/** Starts an emulator in-process. Throws an `Error` with code `invalid_options` or `invalid_snapshot`. */
export function createEmulator(options?: InProcessEmulatorOptions): InProcessEmulator;

/** Starts an emulator listening on 127.0.0.1 (Node, Deno, Bun), with the realtime WebSocket. */
export function startEmulator(options?: StartEmulatorOptions): Promise<RunningEmulator>;
