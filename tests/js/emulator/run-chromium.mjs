// docauto/emulator in headless Chromium: a page served on 127.0.0.1 imports the browser entry and runs the
// in-process flow; the webhook receiver runs here, in Node, on another origin.
import { fileURLToPath } from "node:url";
import { serveStatic } from "../../../www/static.mjs";
import { launchChromium } from "../chromium.mjs";
import { report } from "../common.mjs";
import { startReceiver } from "./receiver.mjs";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const srv = await serveStatic({ "/pkg/": `${root}pkg`, "/tests/js/": `${root}tests/js` });
const receiver = await startReceiver();
const browser = await launchChromium();
let out = { lines: [], passed: 0, failed: 1 };
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${srv.url}/tests/js/emulator/browser.html?receiver=${encodeURIComponent(receiver.base)}`);
  try {
    await page.waitForFunction(() => window.__emulatorResult, null, { timeout: 90_000 });
    out = await page.evaluate(() => window.__emulatorResult);
  } catch (e) {
    console.log(`FAIL page did not finish: ${e.message} ${errors.join(" | ")}`);
  }
} finally {
  await browser.close();
  await srv.close();
  await receiver.close();
}
for (const l of out.lines) console.log(l);
report("docauto/emulator in chromium", out);
