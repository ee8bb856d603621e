// Generated from the Rust types by `cargo xtask types` (ts-rs, see src/typegen.rs): do not edit.

/**
 * The data options of `new RealtimeTranscriber(options)`. Decoded as JS gives them (camelCase; numbers are JS
 * numbers); the handles (`getUrl`, `WebSocket`) are added by `RealtimeTranscriberOptions`.
 */
export type RealtimeTranscriberDataOptions = {
  /**
   * The session's single-use `ws://` / `wss://` ticket URL (from `client.realtime.createSession` on your
   * server); secret, never printed.
   */
  url?: string;
  /**
   * The session's `sampleRate` in Hz (8000 to 48000); default 16000.
   */
  sampleRate?: number;
  /**
   * Audio frame length in ms (20 to 100); default 40.
   */
  frameMs?: number;
  /**
   * Audio kept while reconnecting, in ms (oldest dropped first); default 10000.
   */
  bufferMs?: number;
  /**
   * Interval of `{"type":"keepalive"}` messages in ms (at least 1); default 5000.
   */
  keepaliveMs?: number;
  /**
   * How long `stop()` waits for the service's last `final` and close, in ms; default 10000.
   */
  stopTimeoutMs?: number;
  /**
   * How long `start()` (and each reconnect) waits for the service's `open`, in ms; 0 waits forever; default
   * 10000. Before the first `open` the session then ends with `open_timeout`; on a reconnect it counts as a
   * failed attempt.
   */
  openTimeoutMs?: number;
  /**
   * Audio sent and no message from the service for this long (ms) counts as a dead connection: it reconnects
   * through `getUrl` (error `connection_silent`). 0 (default) turns the check off: the service may stay quiet
   * during silence (the API documents no message then; the emulator sends none), and each reconnect spends a
   * fresh ticket.
   */
  silenceTimeoutMs?: number;
  /**
   * Reconnect attempts per outage before `reconnect_failed` (0: never reconnect); default 6.
   */
  reconnectAttempts?: number;
  /**
   * First reconnect delay in ms (doubles up to 8 s, with jitter); default 500.
   */
  reconnectDelayMs?: number;
  /**
   * The microphone to open (a `MediaDeviceInfo.deviceId` from `navigator.mediaDevices.enumerateDevices()`);
   * default the browser's choice.
   */
  deviceId?: string;
  /**
   * Browser echo cancellation on the microphone; default true.
   */
  echoCancellation?: boolean;
  /**
   * Browser noise suppression on the microphone; default true.
   */
  noiseSuppression?: boolean;
  /**
   * Browser automatic gain control on the microphone; default true.
   */
  autoGainControl?: boolean;
  /**
   * When the microphone in use goes away: `"switch"` (default) opens the default microphone (a `devicechange`
   * event says so; `device_lost` if there is none); `"error"` reports `device_lost` and stops the session.
   */
  onDeviceLost?: RealtimeDeviceLostPolicy;
};

/**
 * What to do when the microphone in use goes away.
 */
export type RealtimeDeviceLostPolicy = "switch" | "error";

/**
 * A transcript with its times counted from the session's first audio, in seconds. In JS the `detail` of `partial`
 * and `final`: text and its place in the session's audio, in seconds counted from the first audio sent and
 * continuous across reconnects (paused audio is not sent, so it is not counted).
 */
export type RealtimeTranscript = {
  /**
   * The text.
   */
  text: string;
  /**
   * Start, in seconds of session audio.
   */
  start: number;
  /**
   * End, in seconds of session audio.
   */
  end: number;
};

/**
 * Usage of one session, as in the service's `usage` message; in JS the `detail` of `usage` (the service's
 * message, else the client's estimate) and the `usage` getter.
 */
export type RealtimeUsage = {
  /**
   * Started minutes of decoded audio (a partial minute counts as one).
   */
  startedMinutes: number;
  /**
   * Credits charged.
   */
  credits: number;
};

/**
 * RMS and peak of one block of samples. In JS the `detail` of `level` (computed only once a `level` listener was
 * added): the level of one block of audio (about 20 ms from the microphone), in dBFS: -100 for digital silence, at
 * most 0 (float input beyond full scale counts as full scale, as it clips when converted to PCM16; 0 means the
 * input clips).
 */
export type RealtimeLevel = {
  /**
   * Root mean square, in dBFS, at least -100 (`MIN_DBFS`).
   */
  rmsDbfs: number;
  /**
   * Largest absolute sample, in dBFS, at least -100 (`MIN_DBFS`).
   */
  peakDbfs: number;
};

/** Codes of `RealtimeError`: this client's own, and (open) any code of a service `error` message. */
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
  | "audio_not_allowed"
  | "disposed"
  | (string & {});
