// Node (import) and Bun: read the .wasm next to this file and instantiate synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "./wasm/docauto.js";

initSync({ module: readFileSync(new URL("./wasm/docauto_bg.wasm", import.meta.url)) });

// @EXPORTS@
