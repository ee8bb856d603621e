// docauto/emulator in Deno: read the .wasm next to this file (needs read permission for it) and instantiate
// synchronously; startEmulator listens with Deno.serve and Deno.upgradeWebSocket (needs net permission).
import { initSync, Emulator } from "./wasm/docauto.js";
import { createEmulator as inProcess } from "./core.js";
import { startEmulator as listening } from "./serve.js";

initSync({ module: Deno.readFileSync(new URL("./wasm/docauto-emulator.wasm", import.meta.url)) });

export function createEmulator(options) {
  return inProcess(Emulator, options);
}

export function startEmulator(options) {
  return listening(Emulator, options);
}
