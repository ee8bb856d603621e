// docauto/emulator in Cloudflare Workers (workerd): code generation from bytes is disallowed there, so the .wasm is
// imported as a compiled module. The emulator runs in-process (createEmulator); a Worker cannot listen.
import wasmModule from "./wasm/docauto-emulator.wasm";
import { initSync, Emulator } from "./wasm/docauto.js";
import { createEmulator as inProcess, unavailable } from "./core.js";

initSync({ module: wasmModule });

export function createEmulator(options) {
  return inProcess(Emulator, options);
}

export function startEmulator() {
  return Promise.reject(unavailable());
}
