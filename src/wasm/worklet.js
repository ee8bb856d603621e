// AudioWorklet processor of RealtimeTranscriber: averages the input channels to mono and posts blocks of about
// 20 ms to the main thread, where the wasm pipeline resamples, encodes and frames them. No resampling here: the
// processor only copies samples, so the audio thread never waits on wasm.
//
// This file ships inside the wasm module as text (include_str! in src/wasm/realtime/capture.rs) and is loaded through
// a Blob URL, so no bundler plugin or extra file is needed. It must stay self-contained plain JS.
// Named values shared with capture.rs (WORKLET_BLOCK_MS, STOP, FLUSHED): change both sides together.
const BLOCK_MS = 20;
const RENDER_QUANTUM = 128;
const FLUSH = "flush";
const STOP = "stop";
const FLUSHED = "flushed";

class DocautoCaptureProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const wanted = options && options.processorOptions && options.processorOptions.blockSamples;
    // Default: 20 ms at the context rate, a multiple of the 128-sample render quantum.
    const samples = wanted || (sampleRate * BLOCK_MS) / 1000;
    this.size = Math.max(RENDER_QUANTUM, Math.ceil(samples / RENDER_QUANTUM) * RENDER_QUANTUM);
    this.block = new Float32Array(this.size);
    this.filled = 0;
    this.running = true;
    this.port.onmessage = (event) => {
      if (event.data === FLUSH) {
        this.post();
        this.port.postMessage(FLUSHED);
      } else if (event.data === STOP) {
        this.post();
        this.running = false;
        this.port.postMessage(FLUSHED);
      }
    };
  }

  post() {
    if (this.filled === 0) return;
    const out = this.block.slice(0, this.filled);
    this.port.postMessage(out, [out.buffer]);
    this.filled = 0;
  }

  process(inputs) {
    if (!this.running) return false;
    const input = inputs[0];
    // An input with no channels means the source is inactive for this render quantum (128 frames): record silence
    // rather than nothing, so the stream keeps real time (skipping would splice the audio and shift its pitch).
    const channels = input ? input.length : 0;
    const frames = channels > 0 ? input[0].length : RENDER_QUANTUM;
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += input[c][i];
      this.block[this.filled++] = channels > 0 ? sum / channels : 0;
      if (this.filled === this.size) this.post();
    }
    return true;
  }
}

registerProcessor("docauto-capture", DocautoCaptureProcessor);
