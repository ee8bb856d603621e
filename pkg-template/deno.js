// Deno: read the .wasm next to this file (needs read permission for it) and instantiate synchronously.
// Webhook bodies are hashed with node:crypto, and verifySync checks signatures with it; verify keeps WebCrypto,
// which is faster than Deno's node:crypto verify (measured: about 3 400/s against 2 000/s for one P-256 signature).
import { createPublicKey, hash, verify } from "node:crypto";
import * as glue from "./wasm/docauto.js";

glue.initSync({ module: Deno.readFileSync(new URL("./wasm/docauto_bg.wasm", import.meta.url)) });
// Absent from the docauto/realtime module, which verifies nothing.
glue.__useNodeCrypto?.({ createPublicKey, hash, verify }, false);

// @EXPORTS@
