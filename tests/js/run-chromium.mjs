// Headless Chromium: a page served on 127.0.0.1 imports the package from a plain <script type="module">.
import { fileURLToPath } from "node:url";
import { serveStatic } from "../../www/static.mjs";
import { launchChromium, runPage } from "./chromium.mjs";
import { report } from "./common.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const srv = await serveStatic({
  "/pkg/": root + "pkg",
  "/tests/js/": root + "tests/js",
  "/target/docauto-js/": root + "target/docauto-js",
});
const browser = await launchChromium();
let out = { lines: [], passed: 0, failed: 1 };
try {
  out = await runPage(browser, `${srv.url}/tests/js/browser.html`, "__docautoResult");
} finally {
  await browser.close();
  await srv.close();
}
for (const l of out.lines) console.log(l);
report("chromium", out);
