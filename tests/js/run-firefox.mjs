// Headless Firefox (Debian firefox-esr, puppeteer-core over WebDriver BiDi): the same browser page as
// run-chromium.mjs, which imports the package from a plain <script type="module"> and runs the webhook suite.
import { fileURLToPath } from "node:url";
import { serveStatic } from "../../www/static.mjs";
import { launchFirefox } from "./firefox.mjs";
import { hangingServer, report } from "./common.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const srv = await serveStatic({
  "/pkg/": root + "pkg",
  "/tests/js/": root + "tests/js",
  "/target/docauto-js/": root + "target/docauto-js",
});
const hang = await hangingServer();
let out = { lines: [], passed: 0, failed: 1 };
let browser;
try {
  browser = await launchFirefox();
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${srv.url}/tests/js/browser.html?hang=${encodeURIComponent(hang.url)}`);
  try {
    await page.waitForFunction(() => window.__docautoResult, { timeout: 90_000 });
    out = await page.evaluate(() => window.__docautoResult);
  } catch (e) {
    console.log(`FAIL page did not finish: ${e.message} ${errors.join(" | ")}`);
  }
} catch (e) {
  console.log(`FAIL firefox did not start: ${e?.message ?? e}`);
} finally {
  await browser?.close();
  await srv.close();
  await hang.close();
}
for (const l of out.lines) console.log(l);
report("firefox", out);
