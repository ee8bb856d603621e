// The demo page: tabs, the service badge, the emulator's "Simulate" menu, and the four panels.
import { api, h, showError } from "./ui.js";
import { documentsPanel } from "./documents.js";
import { inboxPanel } from "./inbox.js";
import { livePanel } from "./live.js";
import { inspectorPanel } from "./inspector.js";

const $ = (id) => document.getElementById(id);

function tabs() {
  const list = [...document.querySelectorAll('[role="tab"]')];
  const select = (tab, focus) => {
    for (const t of list) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      $(t.getAttribute("aria-controls")).hidden = !on;
    }
    if (focus) tab.focus();
    history.replaceState(null, "", `#${tab.id.replace("tab-", "")}`);
  };
  for (const t of list) {
    t.addEventListener("click", () => select(t, false));
    t.addEventListener("keydown", (e) => {
      const i = list.indexOf(t);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: list.length - 1 }[e.key];
      if (next === undefined) return;
      e.preventDefault();
      select(list[(next + list.length) % list.length], true);
    });
  }
  select($(`tab-${location.hash.slice(1)}`) ?? list[0], false);
  window.addEventListener("hashchange", () => {
    const tab = $(`tab-${location.hash.slice(1)}`);
    if (tab) select(tab, false);
  });
}

function simulate(config, inbox) {
  if (!config.control) return;
  $("simulate").hidden = false;
  const say = (text) => {
    $("sim-status").textContent = text;
  };
  const act = (id, path, body, text, after) => $(id).addEventListener("click", async () => {
    showError($("sim-error"), null);
    try {
      await api(path, { method: "POST", body });
      say(text());
      after?.();
    } catch (e) {
      showError($("sim-error"), e);
    }
  });
  act("sim-rate", "api/simulate/rate-limit", {}, () => "The next request to the service answers 429 rate_limited.");
  let exhausted = false;
  $("sim-credits").addEventListener("click", async () => {
    showError($("sim-error"), null);
    try {
      await api("api/simulate/credits", { method: "POST", body: { exhausted: !exhausted } });
      exhausted = !exhausted;
      $("sim-credits").setAttribute("aria-pressed", String(exhausted));
      $("sim-credits").textContent = exhausted ? "Restore credits" : "Exhaust credits";
      say(exhausted ? "Credits exhausted: new runs and sessions answer 402 credits_exhausted." : "Credits restored.");
    } catch (e) {
      showError($("sim-error"), e);
    }
  });
  act("sim-clock", "api/simulate/clock", { seconds: 8 * 86400 }, () => "The service clock moved 8 days: unfinished agent runs are past their deadline. Its signatures are now dated 8 days ahead of this machine, so the backend rejects them as not_yet_valid.",
    () => inbox.refreshCurrent());
}

async function boot() {
  tabs();
  let config;
  try {
    config = await api("api/config");
  } catch (e) {
    $("service").replaceChildren(h("span", { class: "badge bad" }, "offline"));
    showError($("boot-error"), e);
    return;
  }
  $("service").replaceChildren(
    h("span", { class: `badge ${config.mode === "emulator" ? "info" : "good"}` }, config.mode),
    " ", h("code", {}, config.service));
  const counter = $("tab-webhooks").querySelector(".count");
  inspectorPanel((n) => {
    counter.textContent = String(n);
    counter.hidden = n === 0;
  });
  documentsPanel(config);
  const inbox = inboxPanel(config);
  livePanel();
  simulate(config, inbox);
  document.body.dataset.ready = "true";
}

boot();
