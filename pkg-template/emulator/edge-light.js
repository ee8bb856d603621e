// docauto/emulator in Vercel's edge runtime: it compiles wasm only from a `.wasm?module` import. The emulator runs
// in-process (createEmulator); an edge function cannot listen.
import wasmModule from "./wasm/docauto-emulator.wasm?module";
import * as glue from "./wasm/docauto-emulator.js";
import * as core from "./core.js";

glue.initSync({ module: wasmModule });

export function createEmulator(options) {
  return core.createEmulator(glue, options);
}

export function startEmulator() {
  return Promise.reject(core.unavailable());
}
