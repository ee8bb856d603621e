// Deno: read the .wasm next to this file (needs read permission for it) and instantiate synchronously.
import { initSync } from "./wasm/docauto.js";

initSync({ module: Deno.readFileSync(new URL("./wasm/@WASM@", import.meta.url)) });
// @P256@

// @NODE_CRYPTO(deno)@

// @EXPORTS@
