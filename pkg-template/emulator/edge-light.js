// docauto/emulator in Vercel's edge runtime and Next.js edge routes: wasm compiles only from a `.wasm?module` import
// (which may come from another realm: the glue's initSync accepts that). The emulator runs in-process
// (createEmulator); an edge function cannot listen.
import wasmModule from "./wasm/docauto-emulator.wasm?module";
import { initSync, Emulator } from "./wasm/docauto.js";
import { createEmulator as inProcess, unavailable } from "./core.js";

initSync({ module: wasmModule });

export function createEmulator(options) {
  return inProcess(Emulator, options);
}

export function startEmulator() {
  return Promise.reject(unavailable());
}
