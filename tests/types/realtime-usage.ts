// Type-checked with `tsc --strict` (tests/types/tsconfig.json) against the built package: the realtime transcriber's
// options, methods and events with their real types. Never executed.
import {
  RealtimeTranscriber,
  RealtimeError,
  type RealtimeTranscriberOptions,
  type RealtimeLevel,
  type RealtimeTranscript,
} from "docauto/realtime";

export async function live(): Promise<void> {
  const options: RealtimeTranscriberOptions = {
    getUrl: async () => "wss://example.test/rt?ticket=t",
    openTimeoutMs: 5_000,
    silenceTimeoutMs: 20_000,
    deviceId: "default",
    echoCancellation: false,
    noiseSuppression: true,
    autoGainControl: false,
    onDeviceLost: "error",
  };
  const t = new RealtimeTranscriber(options);
  t.addEventListener("level", (e) => {
    const level: RealtimeLevel = e.detail;
    const db: number = level.rmsDbfs + level.peakDbfs;
    void db;
  });
  t.addEventListener("final", (e) => {
    const tr: RealtimeTranscript = e.detail;
    const seconds: number = tr.end - tr.start;
    void seconds;
  });
  t.addEventListener("devicechange", (e) => {
    const why: "device_lost" = e.detail.reason;
    void why;
  });
  t.addEventListener("error", (e) => {
    if (e.detail.code === "open_timeout" || e.detail.code === "device_lost") void e.detail.retryable;
  });
  try {
    await t.start();
  } catch (e) {
    if (e instanceof RealtimeError && e.code === "open_timeout") return;
  }
  t.pause();
  const paused: boolean = t.paused;
  void paused;
  t.resume();
  await t.stop();
}
