// docauto/emulator in browsers, module workers and any runtime without a more specific condition: top-level await
// of the default init, then the emulator in-process (createEmulator). Nothing can listen here.
import init, * as glue from "./wasm/docauto-emulator.js";
import * as core from "./core.js";

await init({ module_or_path: new URL("./wasm/docauto-emulator.wasm", import.meta.url) });

export function createEmulator(options) {
  return core.createEmulator(glue, options);
}

export function startEmulator() {
  return Promise.reject(core.unavailable());
}
