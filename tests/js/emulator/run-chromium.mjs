// docauto/emulator in a browser: a page served on 127.0.0.1 imports the browser entry and runs the in-process flow;
// the webhook receiver runs here, in Node, on another origin. Headless Chromium, or WebKit with `--browser webkit`
// (WebKitGTK's MiniBrowser over WebDriver, tests/js/webkit.mjs).
import { fileURLToPath } from "node:url";
import { serveStatic } from "../../../www/static.mjs";
import { launchChromium, runPage } from "../chromium.mjs";
import { launchWebKit } from "../webkit.mjs";
import { report } from "../common.mjs";
import { startReceiver } from "./receiver.mjs";

const engine = process.argv.includes("--browser") && process.argv[process.argv.indexOf("--browser") + 1] === "webkit" ? "webkit" : "chromium";
const root = fileURLToPath(new URL("../../../", import.meta.url));
const srv = await serveStatic({ "/pkg/": `${root}pkg`, "/tests/js/": `${root}tests/js` });
const receiver = await startReceiver();
let out = { lines: [], passed: 0, failed: 1 };
let browser;
try {
  browser = engine === "webkit" ? await launchWebKit() : await launchChromium();
  const query = `receiver=${encodeURIComponent(receiver.base)}&engine=${engine}`;
  out = await runPage(browser, `${srv.url}/tests/js/emulator/browser.html?${query}`, "__emulatorResult");
} catch (e) {
  console.log(`FAIL the browser did not start: ${e?.message ?? e}`);
} finally {
  await browser?.close();
  await srv.close();
  await receiver.close();
}
for (const l of out.lines) console.log(l);
report(`docauto/emulator in ${engine}`, out);
