// Vercel's edge runtime and Next.js edge routes: wasm compiles only from a `.wasm?module` import, which their
// bundler turns into a WebAssembly.Module; compiling bytes at run time is refused there. So the .wasm file itself is
// imported, with no base64 copy of it in the package. The module may come from another realm (Next.js compiles it
// outside the route's sandbox): the glue's initSync accepts that (see xtask/src/build.rs, patch_glue).
import wasmModule from "./wasm/@WASM@?module";
import { initSync } from "./wasm/docauto.js";

initSync({ module: wasmModule });
// @P256@

// @EXPORTS@
