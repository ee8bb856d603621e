// Cloudflare Workers (workerd): code generation from bytes is disallowed there, so the .wasm is imported as a
// compiled module (wrangler and miniflare provide a WebAssembly.Module for a `.wasm` import).
import wasmModule from "./wasm/@WASM@";
import { initSync } from "./wasm/docauto.js";

initSync({ module: wasmModule });
// @P256@

// @EXPORTS@
