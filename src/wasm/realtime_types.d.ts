/**
 * Options of `new RealtimeTranscriber(options)`: give `url`, `getUrl`, or both. The data options are generated from
 * the Rust type (`RealtimeTranscriberDataOptions`); these are the JS handles.
 */
export interface RealtimeTranscriberOptions extends RealtimeTranscriberDataOptions {
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

/** A realtime failure (`instanceof RealtimeError` holds). */
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
  open: CustomEvent<RealtimeOpen>;
  partial: CustomEvent<RealtimeTranscript>;
  final: CustomEvent<RealtimeTranscript>;
  usage: CustomEvent<RealtimeUsage>;
  error: CustomEvent<RealtimeError>;
  close: CustomEvent<RealtimeClose>;
  reconnecting: CustomEvent<RealtimeReconnecting>;
  level: CustomEvent<RealtimeLevel>;
  devicechange: CustomEvent<RealtimeDeviceChange>;
}

/** The EventTarget methods of `RealtimeTranscriber`, typed per event (merged into the class). */
export interface RealtimeTranscriber {
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
