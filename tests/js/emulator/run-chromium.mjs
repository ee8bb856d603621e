// docauto/emulator in headless Chromium: a page served on 127.0.0.1 imports the browser entry and runs the
// in-process flow; the webhook receiver runs here, in Node, on another origin.
import { fileURLToPath } from "node:url";
import { serveStatic } from "../../../www/static.mjs";
import { launchChromium, runPage } from "../chromium.mjs";
import { report } from "../common.mjs";
import { startReceiver } from "./receiver.mjs";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const srv = await serveStatic({ "/pkg/": `${root}pkg`, "/tests/js/": `${root}tests/js` });
const receiver = await startReceiver();
const browser = await launchChromium();
let out = { lines: [], passed: 0, failed: 1 };
try {
  out = await runPage(browser, `${srv.url}/tests/js/emulator/browser.html?receiver=${encodeURIComponent(receiver.base)}`, "__emulatorResult");
} finally {
  await browser.close();
  await srv.close();
  await receiver.close();
}
for (const l of out.lines) console.log(l);
report("docauto/emulator in chromium", out);
