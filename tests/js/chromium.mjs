// Launches Debian's Chromium headless through playwright-core (never a downloaded browser build).
import { chromium } from "playwright-core";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--no-first-run",
];

/**
 * Debian's Chromium, headless. `microphone`: a WAV file the fake microphone plays (getUserMedia granted without a
 * prompt, audio allowed to start without a gesture); `args`: more flags.
 */
export function launchChromium({ microphone, args = [] } = {}) {
  const media = microphone
    ? [
        "--use-fake-device-for-media-stream",
        "--use-fake-ui-for-media-stream",
        `--use-file-for-fake-audio-capture=${microphone}`,
        "--autoplay-policy=no-user-gesture-required",
      ]
    : [];
  return chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: [...CHROMIUM_ARGS, ...media, ...args], timeout: 60_000 });
}

// Opens `url` in a new page of `browser` and waits for the page to set `window[resultName]` (a suite result:
// `{ lines, passed, failed }`); a page that does not finish in 90 s, or throws first, is one failure.
export async function runPage(browser, url, resultName) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  try {
    await page.waitForFunction((name) => window[name], resultName, { timeout: 90_000 });
    return await page.evaluate((name) => window[name], resultName);
  } catch (e) {
    console.log(`FAIL page did not finish: ${e.message} ${errors.join(" | ")}`);
    return { lines: [], passed: 0, failed: 1 };
  }
}
