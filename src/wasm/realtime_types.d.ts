/**
 * Options of `new RealtimeTranscriber(options)`: give `url`, `getUrl`, or both. The data options are generated from
 * the Rust type (`RealtimeTranscriberDataOptions`); these are the JS handles (and `tracerProvider`, `meterProvider`:
 * where each session's span and metric points go).
 */
export interface RealtimeTranscriberOptions extends RealtimeTranscriberDataOptions, TelemetryOptions {
  /** Gives a fresh ticket URL (from your backend) for each reconnect; without it a dropped socket is final. */
  getUrl?: () => string | Promise<string>;
  /** A WebSocket constructor where the runtime has none (Node 20: the `ws` package); default the global one. */
  WebSocket?: new (url: string) => unknown;
}

/** Options of `start()`. */
export interface RealtimeStartOptions {
  /** Capture this stream instead of the microphone; its tracks stay yours (not stopped by `stop()`). */
  stream?: MediaStream;
  /** `false`: open the socket without capturing (feed audio with `sendAudio`). */
  microphone?: boolean;
}

/** `state` of a transcriber. */
export type RealtimeState = "idle" | "connecting" | "open" | "reconnecting" | "closed";

/** A realtime failure (`instanceof RealtimeError` holds, also with the class of another copy of the package). */
export declare class RealtimeError extends Error {
  constructor(code: RealtimeErrorCode, message: string, retryable?: boolean);
  name: "RealtimeError";
  code: RealtimeErrorCode;
  /** Whether a reconnect (with a fresh ticket) may help. */
  retryable: boolean;
}

/** `detail` of `open`. */
export interface RealtimeOpen {
  sessionId: string;
  sampleRate: number;
  /** Whether this is a reconnect. */
  reconnected: boolean;
  /** Audio the outage dropped from the reconnect buffer, in ms. */
  droppedMs: number;
}

/** `detail` of `reconnecting`. */
export interface RealtimeReconnecting {
  attempt: number;
  delayMs: number;
  error: RealtimeError;
}

/** `detail` of `close`. */
export interface RealtimeClose {
  code: number;
  reason: string;
  /** Why, when the session did not end normally. */
  error?: RealtimeError;
}

/** `detail` of `devicechange`: the microphone in use went away and the default one replaced it. */
export interface RealtimeDeviceChange {
  reason: "device_lost";
}

/** Events of `RealtimeTranscriber` and the type of their `detail`. */
export interface RealtimeEventMap {
  /** The service opened the session (again after a reconnect: `reconnected` is true). */
  open: CustomEvent<RealtimeOpen>;
  /** Provisional text, replaced by later `partial` and `final` events. */
  partial: CustomEvent<RealtimeTranscript>;
  /** Settled text, after a pause in the speech. */
  final: CustomEvent<RealtimeTranscript>;
  /** The session's usage, as the service reported it. */
  usage: CustomEvent<RealtimeUsage>;
  /** A failure; the session may go on (a `close` says when it ended). */
  error: CustomEvent<RealtimeError>;
  /** The session ended; `error` says why when it did not end normally. */
  close: CustomEvent<RealtimeClose>;
  /** The connection dropped; the next attempt comes after `delayMs`. */
  reconnecting: CustomEvent<RealtimeReconnecting>;
  /** The level of a block of audio (computed only while a `level` listener is added). */
  level: CustomEvent<RealtimeLevel>;
  /** The microphone in use went away and the default one replaced it. */
  devicechange: CustomEvent<RealtimeDeviceChange>;
}

/** The EventTarget methods of `RealtimeTranscriber`, typed per event (merged into the class). */
export interface RealtimeTranscriber {
  /** Adds a listener of one of the events (see `RealtimeEventMap`); it receives the event's `CustomEvent`. */
  addEventListener<K extends keyof RealtimeEventMap>(
    type: K,
    listener: (event: RealtimeEventMap[K]) => void,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
  /** Removes a listener added with `addEventListener`. */
  removeEventListener<K extends keyof RealtimeEventMap>(
    type: K,
    listener: (event: RealtimeEventMap[K]) => void,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | EventListenerOptions,
  ): void;
}
