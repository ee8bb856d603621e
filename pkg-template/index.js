// Browsers, module workers and any runtime without a more specific condition.
// Top-level await of the default init: a plain `<script type="module">` import works with no init call. Vite and
// webpack emit the module as an asset from this `new URL(..., import.meta.url)`; with esbuild, which emits none,
// copy `wasm/@WASM@` into a `wasm/` folder next to the bundle (README, "Bundlers").
import init from "./wasm/docauto.js";
// @P256_START@

await init({ module_or_path: new URL("./wasm/@WASM@", import.meta.url) });
// @P256@

// @EXPORTS@
