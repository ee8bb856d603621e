// The demo backend under Deno, as www/README.md shows it (port from PORT).
import backend from "../../../www/backend.mjs";
import { fileAssets } from "../../../www/file-assets.mjs";

globalThis.DEMO_ASSETS = fileAssets(new URL("../../../www/public/", import.meta.url), new URL("../../../pkg/", import.meta.url));
Deno.serve({ hostname: "127.0.0.1", port: Number(Deno.env.get("PORT")) }, (request) => backend.fetch(request));
