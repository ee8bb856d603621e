// docauto/emulator in Cloudflare Workers (workerd): code generation from bytes is disallowed there, so the .wasm is
// imported as a compiled module. The emulator runs in-process (createEmulator); a Worker cannot listen.
import wasmModule from "./wasm/docauto-emulator.wasm";
import * as glue from "./wasm/docauto-emulator.js";
import * as core from "./core.js";

glue.initSync({ module: wasmModule });

export function createEmulator(options) {
  return core.createEmulator(glue, options);
}

export function startEmulator() {
  return Promise.reject(core.unavailable());
}
