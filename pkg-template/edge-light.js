// Vercel's edge runtime: no fs, and initSync rejects a WebAssembly.Module from another realm, so the wasm bytes
// travel inside this package as base64 and are compiled in the runtime's own realm.
import wasmBase64 from "./wasm/docauto_bg.wasm.base64.js";
import { initSync } from "./wasm/docauto.js";

const binary = atob(wasmBase64);
const bytes = new Uint8Array(binary.length);
for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
initSync({ module: bytes });

// @EXPORTS@
