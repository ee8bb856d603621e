// Node (import) and Bun: read the .wasm next to this file and instantiate synchronously. Webhook signatures are
// checked and bodies hashed with node:crypto (OpenSSL in Node, BoringSSL in Bun) by verify and verifySync: it is
// handed to the module before any export is used.
import { readFileSync } from "node:fs";
import { createPublicKey, hash, verify } from "node:crypto";
import * as glue from "./wasm/docauto.js";

glue.initSync({ module: readFileSync(new URL("./wasm/docauto_bg.wasm", import.meta.url)) });
// Absent from the docauto/realtime module, which verifies nothing.
glue.__useNodeCrypto?.({ createPublicKey, hash, verify }, true);

// @EXPORTS@
