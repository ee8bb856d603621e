// AudioWorklet processor of RealtimeTranscriber: averages the input channels to mono and posts blocks of about
// 20 ms to the main thread, where the wasm pipeline resamples, encodes and frames them. No resampling here: the
// processor only copies samples, so the audio thread never waits on wasm.
//
// This file ships inside the wasm module as text (include_str! in src/wasm/realtime/capture.rs) and is loaded through
// a Blob URL, so no bundler plugin or extra file is needed. It must stay self-contained plain JS.
class DocautoCaptureProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const wanted = options && options.processorOptions && options.processorOptions.blockSamples;
    // Default: 20 ms at the context rate, a multiple of the 128-sample render quantum.
    this.size = Math.max(128, Math.ceil((wanted || sampleRate / 50) / 128) * 128);
    this.block = new Float32Array(this.size);
    this.filled = 0;
    this.running = true;
    this.port.onmessage = (event) => {
      if (event.data === "flush") {
        this.post();
        this.port.postMessage("flushed");
      } else if (event.data === "stop") {
        this.post();
        this.running = false;
        this.port.postMessage("flushed");
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
    const frames = channels > 0 ? input[0].length : 128;
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
