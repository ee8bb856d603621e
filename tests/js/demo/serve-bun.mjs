// The demo backend under Bun, as www/README.md shows it (port from PORT).
import backend from "../../../www/backend.mjs";
import { fileAssets } from "../../../www/file-assets.mjs";

globalThis.DEMO_ASSETS = fileAssets(new URL("../../../www/public/", import.meta.url), new URL("../../../pkg/", import.meta.url));
Bun.serve({ hostname: "127.0.0.1", port: Number(process.env.PORT), fetch: (request) => backend.fetch(request) });
