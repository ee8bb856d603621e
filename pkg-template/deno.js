// Deno: read the .wasm next to this file (needs read permission for it), compile it off the main thread (top-level
// await) and instantiate. Measured against `new WebAssembly.Module` on the main thread by tests/js/cold-start.mjs
// (`docauto/webhooks`, two interleaved A/B runs of 81 rounds): the first verified delivery 2.1 ms sooner in both,
// for about 1 ms more CPU on V8's background thread. Node and Bun keep the synchronous compile (no gain measured).
import { initSync } from "./wasm/docauto.js";

initSync({ module: await WebAssembly.compile(Deno.readFileSync(new URL("./wasm/@WASM@", import.meta.url))) });
// @P256@

// @NODE_CRYPTO(deno)@

// @EXPORTS@
