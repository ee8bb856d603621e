// docauto/emulator in browsers, module workers and any runtime without a more specific condition: top-level await
// of the default init, then the emulator in-process (createEmulator). Nothing can listen here. Vite and webpack emit
// the module as an asset from this `new URL(..., import.meta.url)`; with esbuild, copy `wasm/docauto-emulator.wasm`
// into a `wasm/` folder next to the bundle (docs/runtimes.md, "Bundlers and frameworks").
import init, { Emulator } from "./wasm/docauto.js";
import { createEmulator as inProcess, unavailable } from "./core.js";

await init({ module_or_path: new URL("./wasm/docauto-emulator.wasm", import.meta.url) });

export function createEmulator(options) {
  return inProcess(Emulator, options);
}

export function startEmulator() {
  return Promise.reject(unavailable());
}
