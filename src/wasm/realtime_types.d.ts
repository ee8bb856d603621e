/** Options of `new RealtimeTranscriber(options)`: give `url`, `getUrl`, or both. */
export interface RealtimeTranscriberOptions {
  /** The session's single-use `ws://` / `wss://` ticket URL (from `client.realtime.createSession` on your server). */
  url?: string;
  /** Gives a fresh ticket URL (from your backend) for each reconnect; without it a dropped socket is final. */
  getUrl?: () => string | Promise<string>;
  /** A WebSocket constructor where the runtime has none (Node 20: the `ws` package); default the global one. */
  WebSocket?: new (url: string) => unknown;
  /** The session's `sampleRate` in Hz (8000 to 48000); default 16000. */
  sampleRate?: number;
  /** Audio frame length in ms (20 to 100); default 40. */
  frameMs?: number;
  /** Audio kept while reconnecting, in ms (oldest dropped first); default 10000. */
  bufferMs?: number;
  /** Interval of `{"type":"keepalive"}` messages in ms; default 5000. */
  keepaliveMs?: number;
  /** How long `stop()` waits for the service's last `final` and close, in ms; default 10000. */
  stopTimeoutMs?: number;
  /** Reconnect attempts per outage before `reconnect_failed` (0: never reconnect); default 6. */
  reconnectAttempts?: number;
  /** First reconnect delay in ms (doubles up to 8 s, with jitter); default 500. */
  reconnectDelayMs?: number;
  /** How long `start()` (and each reconnect) waits for the service's `open`, in ms; 0 waits forever; default 10000.
   * Before the first `open` the session then ends with `open_timeout`; on a reconnect it counts as a failed attempt. */
  openTimeoutMs?: number;
  /** Audio sent and no message from the service for this long (ms) counts as a dead connection: it reconnects through
   * `getUrl` (error `connection_silent`). 0 (default) turns the check off: the service may stay quiet during
   * silence, and each reconnect spends a fresh ticket. */
  silenceTimeoutMs?: number;
  /** The microphone to open (a `MediaDeviceInfo.deviceId` from `navigator.mediaDevices.enumerateDevices()`). */
  deviceId?: string;
  /** Browser echo cancellation on the microphone; default true. */
  echoCancellation?: boolean;
  /** Browser noise suppression on the microphone; default true. */
  noiseSuppression?: boolean;
  /** Browser automatic gain control on the microphone; default true. */
  autoGainControl?: boolean;
  /** When the microphone in use goes away: `"switch"` (default) opens the default microphone (a `devicechange` event
   * says so; `device_lost` if there is none); `"error"` reports `device_lost` and stops the session. */
  onDeviceLost?: "switch" | "error";
}

/** Options of `start()`. */
export interface RealtimeStartOptions {
  /** Capture this stream instead of the microphone; its tracks stay yours (not stopped by `stop()`). */
  stream?: MediaStream;
  /** `false`: open the socket without capturing (feed audio with `sendAudio`). */
  microphone?: boolean;
}

/** Usage of the session: the service's `usage` message, else the client's estimate. */
export interface RealtimeUsage {
  startedMinutes: number;
  credits: number;
}

/** `state` of a transcriber. */
export type RealtimeState = "idle" | "connecting" | "open" | "reconnecting" | "closed";

/** Codes of `RealtimeError`. */
export type RealtimeErrorCode =
  | "microphone_denied"
  | "no_audio_device"
  | "ticket_used"
  | "ticket_invalid"
  | "ticket_expired"
  | "socket_closed"
  | "unsupported_audio_format"
  | "reconnect_failed"
  | "idle_timeout"
  | "invalid_message"
  | "invalid_options"
  | "invalid_state"
  | "open_timeout"
  | "connection_silent"
  | "device_lost"
  | (string & {});

/** A realtime failure (`instanceof RealtimeError` holds). */
export declare class RealtimeError extends Error {
  constructor(code: RealtimeErrorCode, message: string, retryable?: boolean);
  name: "RealtimeError";
  code: RealtimeErrorCode;
  /** Whether a reconnect (with a fresh ticket) may help. */
  retryable: boolean;
}

/** `detail` of `partial` and `final`: text and its place in the session's audio, in seconds counted from the
 * first audio sent and continuous across reconnects (paused audio is not sent, so it is not counted). */
export interface RealtimeTranscript {
  text: string;
  start: number;
  end: number;
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

/** `detail` of `level` (computed only once a `level` listener was added): the level of one block of audio (about
 * 20 ms from the microphone), in dBFS: -100 for digital silence, at most 0 (float input beyond full scale counts as
 * full scale, as it clips when converted to PCM16; 0 means the input clips). */
export interface RealtimeLevel {
  rmsDbfs: number;
  peakDbfs: number;
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
