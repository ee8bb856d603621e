// docauto/emulator in Node (import) and Bun: read the .wasm next to this file and instantiate synchronously (the path
// is built from this file's own path, which bundlers leave intact); startEmulator listens with node:http and `ws`
// (Bun: Bun.serve).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { initSync, Emulator } from "./wasm/docauto.js";
import { createEmulator as inProcess } from "./core.js";
import { startEmulator as listening } from "./serve.js";

initSync({ module: readFileSync(join(dirname(fileURLToPath(import.meta.url)), "wasm", "docauto-emulator.wasm")) });

export function createEmulator(options) {
  return inProcess(Emulator, options);
}

export function startEmulator(options) {
  return listening(Emulator, options);
}
