// A browser page served on 127.0.0.1 imports the package from a plain <script type="module"> and runs the client
// entry's checks and the webhook suite: headless Chromium (playwright-core), or WebKit with `--browser webkit`
// (WebKitGTK's MiniBrowser over WebDriver, tests/js/webkit.mjs).
import { fileURLToPath } from "node:url";
import { serveStatic } from "../../www/static.mjs";
import { launchChromium, runPage } from "./chromium.mjs";
import { launchWebKit } from "./webkit.mjs";
import { hangingServer, report } from "./common.mjs";

const WEBKIT = process.argv.includes("--browser") && process.argv[process.argv.indexOf("--browser") + 1] === "webkit";
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
  browser = WEBKIT ? await launchWebKit() : await launchChromium();
  out = await runPage(browser, `${srv.url}/tests/js/browser.html?hang=${encodeURIComponent(hang.url)}`, "__docautoResult");
} catch (e) {
  console.log(`FAIL the browser did not start: ${e?.message ?? e}`);
} finally {
  await browser?.close();
  await srv.close();
  await hang.close();
}
for (const l of out.lines) console.log(l);
report(WEBKIT ? "webkit" : "chromium", out);
