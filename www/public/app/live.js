// Panel 3: live transcription. The backend mints each session (it holds the key); the page gets only the single-use
// ticket URL, through `getUrl`, also on reconnects.
import { RealtimeTranscriber } from "../pkg/realtime/index.js";
import { api, h, showError, clock, host } from "./ui.js";

const $ = (id) => document.getElementById(id);

export function livePanel() {
  const mic = $("mic");
  const transcript = $("transcript");
  let t = null;
  let started = 0;
  let tick = null;
  let partial = null;
  let stopping = false;

  const setState = (text, cls = "") => {
    $("live-status").textContent = text;
    $("live-status").className = `live-status ${cls}`;
  };
  const meter = () => {
    const u = t?.usage ?? { credits: 0, startedMinutes: 0 };
    $("credits").textContent = String(u.credits);
    $("minutes").textContent = String(u.startedMinutes);
    $("elapsed").textContent = clock(started ? (performance.now() - started) / 1000 : 0);
  };
  const setMic = (on) => {
    mic.setAttribute("aria-pressed", String(on));
    mic.querySelector(".mic-label").textContent = on ? "Stop" : "Start the microphone";
    mic.classList.toggle("on", on);
  };

  async function start() {
    showError($("live-error"), null);
    stopping = false;
    mic.disabled = true;
    setState("Asking the backend for a session…");
    transcript.querySelector(".placeholder")?.remove();
    try {
      const first = await api("api/realtime/session", { method: "POST" });
      let firstUrl = first.url;
      t = new RealtimeTranscriber({
        sampleRate: first.sampleRate,
        WebSocket: host.WebSocket,
        // A fresh single-use ticket each time the transcriber (re)connects.
        getUrl: async () => {
          if (firstUrl) {
            const u = firstUrl;
            firstUrl = null;
            return u;
          }
          return (await api("api/realtime/session", { method: "POST" })).url;
        },
      });
      t.addEventListener("partial", (e) => {
        partial ??= transcript.appendChild(h("p", { class: "partial" }));
        partial.replaceChildren(h("time", {}, clock(e.detail.start)), e.detail.text);
      });
      t.addEventListener("final", (e) => {
        const p = h("p", { class: "final" }, h("time", {}, clock(e.detail.start)), e.detail.text);
        if (partial) partial.replaceWith(p);
        else transcript.appendChild(p);
        partial = null;
        transcript.scrollTop = transcript.scrollHeight;
      });
      t.addEventListener("usage", meter);
      t.addEventListener("reconnecting", (e) => setState(`Reconnecting (attempt ${e.detail.attempt})…`, "warn"));
      t.addEventListener("open", (e) => e.detail.reconnected && setState("Listening (reconnected)", "live"));
      t.addEventListener("error", (e) => {
        // Audio blocks still in flight when stop() begins come back as invalid_state (an SDK quirk, reported);
        // after the user asked to stop they are not an error worth showing.
        if (stopping && e.detail?.code === "invalid_state") return;
        showError($("live-error"), e.detail);
      });
      t.addEventListener("close", (e) => {
        if (e.detail.error) showError($("live-error"), e.detail.error);
        finish();
      });
      setState("Connecting…");
      await t.start();
      started = performance.now();
      tick = setInterval(meter, 250);
      setMic(true);
      setState("Listening", "live");
    } catch (e) {
      showError($("live-error"), e);
      setState("Stopped");
      t = null;
    } finally {
      mic.disabled = false;
    }
  }

  function finish() {
    clearInterval(tick);
    tick = null;
    meter();
    partial?.remove();
    partial = null;
    setMic(false);
    if (!$("live-status").classList.contains("warn")) setState("Stopped: microphone, audio and socket released.");
  }

  async function stop() {
    stopping = true;
    mic.disabled = true;
    setState("Stopping: waiting for the last words…");
    await t.stop();
    finish();
    setState("Stopped: microphone, audio and socket released.");
    mic.disabled = false;
  }

  mic.addEventListener("click", () => (t && t.state !== "closed" ? stop() : start()));
  $("live-clear").addEventListener("click", () => {
    transcript.replaceChildren();
    partial = null;
  });
}
