// `docauto/emulator` as the site's examples import it: the package's browser entry, and a `startEmulator` that, as a
// page cannot listen on a port, serves an in-page emulator at http://127.0.0.1:PORT through the page's stand-in
// network (router.js): `fetch` and `WebSocket` to that address reach it, as they would reach a listening one.
import { createEmulator } from "../pkg/emulator/index.js";
import { freePort, serve } from "./router.js";

export * from "../pkg/emulator/index.js";

export async function startEmulator(options = {}) {
  const { port, ...rest } = options ?? {};
  const url = `http://127.0.0.1:${port || freePort()}`;
  const emulator = createEmulator({ ...rest, baseUrl: url });
  const stop = serve(url, (input, init) => emulator.fetch(input, init), emulator.WebSocket);
  return {
    url,
    apiKey: emulator.apiKey,
    snapshot: () => emulator.snapshot(),
    close: async () => {
      stop();
      await emulator.close();
    },
  };
}
