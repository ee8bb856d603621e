// Launches Debian's firefox-esr headless through puppeteer-core over WebDriver BiDi (there is no geckodriver
// package, and Playwright's Firefox needs its own patched build, which cannot be fetched here).
//
// Headless Firefox has no audio output, so every AudioContext stays "suspended" unless a sound server runs:
// `ensurePulseAudio()` starts PulseAudio with a null sink when none answers.
// The fake microphone (`media.navigator.streams.fake`) plays a tone; it cannot play a file.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import puppeteer from "puppeteer-core";

export const FIREFOX = "/usr/bin/firefox-esr";

export const FIREFOX_PREFS = {
  "media.navigator.streams.fake": true,
  "media.navigator.permission.disabled": true,
  "media.autoplay.default": 0,
  "media.autoplay.block-webaudio": false,
  "browser.shell.checkDefaultBrowser": false,
  "datareporting.policy.dataSubmissionEnabled": false,
  "toolkit.telemetry.reportingpolicy.firstRun": false,
  "app.update.enabled": false,
};

/** Starts a PulseAudio daemon with a null sink unless one already answers; throws when it cannot. */
export function ensurePulseAudio() {
  if (spawnSync("pulseaudio", ["--check"]).status === 0) return;
  const started = spawnSync(
    "pulseaudio",
    [
      "--daemonize=yes",
      "--exit-idle-time=-1",
      "-n",
      "--load=module-null-sink sink_name=null",
      "--load=module-native-protocol-unix",
    ],
    { encoding: "utf8" },
  );
  if (spawnSync("pulseaudio", ["--check"]).status !== 0) {
    throw new Error(`PulseAudio did not start (status ${started.status}): ${started.stderr}`);
  }
}

export async function launchFirefox({ audio = false } = {}) {
  if (!existsSync(FIREFOX)) throw new Error(`${FIREFOX} is missing: cargo xtask install puts it there`);
  if (audio) ensurePulseAudio();
  return puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX,
    headless: true,
    extraPrefsFirefox: FIREFOX_PREFS,
    timeout: 90_000,
  });
}
