// docauto/emulator in Node (import) and Bun: read the .wasm next to this file (through a file path, so bundlers
// leave it alone) and instantiate synchronously; startEmulator listens with node:http and `ws` (Bun: Bun.serve).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as glue from "./wasm/docauto-emulator.js";
import * as core from "./core.js";
import * as serve from "./serve.js";

glue.initSync({ module: readFileSync(join(dirname(fileURLToPath(import.meta.url)), "wasm", "docauto-emulator.wasm")) });

export function createEmulator(options) {
  return core.createEmulator(glue, options);
}

export function startEmulator(options) {
  return serve.startEmulator(glue, options);
}
