// Benchmark: CPU time to resample and encode one second of 48 kHz audio to 16 kHz PCM16 frames, through the wasm
// binding (`RealtimeTranscriber.sendAudio` into a socket that only counts bytes) next to a plain-JS linear resampler
// doing the same work (resample, clip, PCM16 little-endian, 40 ms frames) in the same process.
//
// Run: `node tests/js/realtime/bench.mjs [seconds]` with pkg/ built (`cargo xtask build`), or DOCAUTO_GLUE_DIR set
// to a `wasm-bindgen --target web` folder. Prints the realtime factors (audio seconds per CPU second; the floor is
// 200x for the wasm path) and `N passed, N failed`.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { sdkLocation, runner } from "./harness.mjs";
import { median, readWasmIn } from "../common.mjs";

const IN_RATE = 48_000;
const OUT_RATE = 16_000;
const BLOCK = 960; // 20 ms at 48 kHz, what an AudioWorklet posts
const FLOOR = 200;

async function loadTranscriber() {
  const sdk = sdkLocation("node");
  const mod = await import(pathToFileURL(join(sdk.dir, sdk.entry)).href);
  if (sdk.glue) mod.initSync({ module: readWasmIn(sdk.dir) });
  return mod.RealtimeTranscriber;
}

/** A socket that opens at once and only counts the bytes it is given. */
class CountingSocket {
  static bytes = 0;
  constructor() {
    queueMicrotask(() => this.onmessage?.({ data: '{"type":"open","sessionId":"bench","sampleRate":16000}' }));
  }
  send(data) {
    if (typeof data !== "string") CountingSocket.bytes += data.byteLength;
  }
  close() {}
}

/** The plain-JS baseline: linear interpolation 48 kHz -> 16 kHz, PCM16 LE, fixed 40 ms frames. */
function jsPipeline() {
  const step = IN_RATE / OUT_RATE;
  const frameSamples = (OUT_RATE * 40) / 1000;
  let pos = 0; // position of the next output sample, in input samples relative to `prev`'s block start
  let last = 0; // last sample of the previous block
  let frame = new DataView(new ArrayBuffer(frameSamples * 2));
  let filled = 0;
  let bytes = 0;
  return {
    push(block) {
      while (pos < block.length) {
        const i = Math.floor(pos);
        const frac = pos - i;
        const a = i === 0 ? last : block[i - 1];
        const b = block[i];
        let s = a + (b - a) * frac;
        s = s > 1 ? 1 : s < -1 ? -1 : s;
        frame.setInt16(filled * 2, Math.round(s * 32767), true);
        if (++filled === frameSamples) {
          bytes += frame.byteLength;
          frame = new DataView(new ArrayBuffer(frameSamples * 2));
          filled = 0;
        }
        pos += step;
      }
      pos -= block.length;
      last = block[block.length - 1];
    },
    get bytes() {
      return bytes;
    },
  };
}

function signal(seconds) {
  const x = new Float32Array(IN_RATE * seconds);
  for (let i = 0; i < x.length; i++) {
    const t = i / IN_RATE;
    x[i] = 0.4 * Math.sin(2 * Math.PI * 440 * t) + 0.2 * Math.sin(2 * Math.PI * 3100 * t) + 0.05 * Math.sin(2 * Math.PI * 9000 * t);
  }
  return x;
}

/** CPU microseconds (user + system) spent in `fn`. */
function cpu(fn) {
  const before = process.cpuUsage();
  fn();
  const d = process.cpuUsage(before);
  return d.user + d.system;
}

async function main() {
  const seconds = Number(process.argv[2] ?? 20);
  const r = runner();
  const RealtimeTranscriber = await loadTranscriber();
  const audio = signal(seconds);
  const blocks = [];
  for (let o = 0; o + BLOCK <= audio.length; o += BLOCK) blocks.push(audio.subarray(o, o + BLOCK));

  const wasmRounds = [];
  const jsRounds = [];
  let wasmBytes = 0;
  let jsBytes = 0;
  for (let round = 0; round < 5; round++) {
    CountingSocket.bytes = 0;
    const t = new RealtimeTranscriber({ url: "ws://bench.invalid/rt", WebSocket: CountingSocket, sampleRate: OUT_RATE, frameMs: 40 });
    await t.start({ microphone: false });
    wasmRounds.push(cpu(() => { for (const b of blocks) t.sendAudio(b, IN_RATE); }));
    wasmBytes = CountingSocket.bytes;
    const js = jsPipeline();
    jsRounds.push(cpu(() => { for (const b of blocks) js.push(b); }));
    jsBytes = js.bytes;
    t.free();
  }
  const wasmUs = median(wasmRounds) / seconds;
  const jsUs = median(jsRounds) / seconds;
  const wasmFactor = 1e6 / wasmUs;
  const jsFactor = 1e6 / jsUs;
  console.log(`audio: ${seconds} s of 48 kHz float32 in 20 ms blocks -> 16 kHz PCM16, 40 ms frames; median of 5 rounds`);
  console.log(`wasm (windowed sinc, RealtimeTranscriber.sendAudio): ${wasmUs.toFixed(0)} us CPU per audio second, ${wasmFactor.toFixed(0)}x realtime`);
  console.log(`plain JS (linear interpolation):                      ${jsUs.toFixed(0)} us CPU per audio second, ${jsFactor.toFixed(0)}x realtime`);
  console.log(`BENCH ${JSON.stringify({ wasmRealtimeFactor: Math.round(wasmFactor), jsRealtimeFactor: Math.round(jsFactor) })}`);

  await r.test("both_paths_produce_the_same_amount_of_pcm16", () => {
    const expected = seconds * OUT_RATE * 2;
    for (const [name, got] of [["wasm", wasmBytes], ["js", jsBytes]]) {
      if (Math.abs(got - expected) > 2 * 1280) throw new Error(`${name}: ${got} bytes, expected about ${expected}`);
    }
  });
  await r.test(`wasm_resample_and_encode_is_at_least_${FLOOR}x_realtime`, () => {
    if (!(wasmFactor >= FLOOR)) throw new Error(`${wasmFactor.toFixed(0)}x is below the ${FLOOR}x floor`);
  });
  process.exitCode = r.summary("realtime bench") ? 0 : 1;
}

main().catch((e) => {
  console.log(`FAIL setup: ${e?.stack ?? e}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
});
