// Node (import) and Bun: read the .wasm next to this file and instantiate synchronously.
// The path is built from this file's own path: webpack and Turbopack rewrite `new URL("./x", import.meta.url)` in
// server code into an asset URL that is not a file: URL, while `fileURLToPath(import.meta.url)` survives bundling.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { initSync } from "./wasm/docauto.js";

initSync({ module: readFileSync(join(dirname(fileURLToPath(import.meta.url)), "wasm", "@WASM@")) });
// @P256@

// @NODE_CRYPTO(node)@

// @EXPORTS@
