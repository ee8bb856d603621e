// Browsers, module workers and any runtime without a more specific condition.
// Top-level await of the default init: a plain `<script type="module">` import works with no init call.
import init from "./wasm/docauto.js";

await init({ module_or_path: new URL("./wasm/docauto_bg.wasm", import.meta.url) });

// @EXPORTS@
