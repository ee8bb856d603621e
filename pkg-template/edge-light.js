// Vercel's edge runtime: it compiles wasm only from a `.wasm?module` import, which its bundler (Next.js, `vercel
// build`) turns into a WebAssembly.Module of the function's own realm; compiling bytes at run time is refused there.
// So the .wasm file itself is imported, with no base64 copy of it in the package.
import wasmModule from "./wasm/docauto_bg.wasm?module";
import { initSync } from "./wasm/docauto.js";

initSync({ module: wasmModule });

// @EXPORTS@
