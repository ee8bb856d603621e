// Browsers, module workers and any runtime without a more specific condition.
// Top-level await of the default init: an import is all it takes (a page resolves `docauto/...` through a bundler or
// an import map, and serves the `.wasm` files next to this one). Vite and webpack emit every module as an asset from
// its `new URL(..., import.meta.url)`; with esbuild, which emits none, copy every `.wasm` of the package (this entry's
// and, for `docauto/webhooks`, its P-256 module) into a `wasm/` folder next to the bundle (docs/runtimes.md,
// "Bundlers and frameworks").
import init from "./wasm/docauto.js";
// @P256_START@

await init({ module_or_path: new URL("./wasm/@WASM@", import.meta.url) });
// @P256@

// @EXPORTS@
