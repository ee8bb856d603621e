// docauto/emulator in Deno: read the .wasm next to this file (needs read permission for it) and instantiate
// synchronously; startEmulator listens with Deno.serve and Deno.upgradeWebSocket (needs net permission).
import * as glue from "./wasm/docauto-emulator.js";
import * as core from "./core.js";
import * as serve from "./serve.js";

glue.initSync({ module: Deno.readFileSync(new URL("./wasm/docauto-emulator.wasm", import.meta.url)) });

export function createEmulator(options) {
  return core.createEmulator(glue, options);
}

export function startEmulator(options) {
  return serve.startEmulator(glue, options);
}
