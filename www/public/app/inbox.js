// Panel 2: the agent inbox. List agents, start a run, watch its ledger move (re-read whenever a verified webhook
// event about it arrives, and while it works), decide its sign-offs, complete its human steps, see the result. The
// runs the backend started are listed again when the page loads.
import { api, h, showError, pill, onDelivery } from "./ui.js";

const $ = (id) => document.getElementById(id);
const ACTIVE = new Set(["queued", "processing"]);

export function inboxPanel(config) {
  const runs = new Map(); // id -> { run, events: [] }
  const early = new Map(); // run id -> deliveries that arrived before the run was listed
  let current = null;
  let timer = null;

  const track = (run) => {
    const entry = runs.get(run.id) ?? { events: early.get(run.id) ?? [] };
    early.delete(run.id);
    entry.run = run;
    runs.set(run.id, entry);
    return entry;
  };

  async function loadRuns() {
    try {
      const known = await api("api/agent-runs");
      for (const run of known.data.slice().reverse()) if (!runs.has(run.id)) track(run);
      if (!current && known.data.length) show(known.data[0].id);
      else renderList();
    } catch (e) {
      showError($("agents-error"), e);
    }
  }

  async function loadAgents() {
    showError($("agents-error"), null);
    $("agents").replaceChildren(h("li", { class: "muted" }, "Loading agents…"));
    try {
      const list = await api("api/agents");
      $("agents").replaceChildren(...list.data.map(agentCard));
    } catch (e) {
      $("agents").replaceChildren();
      showError($("agents-error"), e);
    }
  }

  function agentCard(agent) {
    const docSelect = h("select", { "aria-label": `Document for ${agent.name}` },
      config.samples.map((s) => h("option", { value: s.id, selected: agent.id.includes(s.id) }, s.title)));
    const start = h("button", { class: "primary", type: "button" }, "Start run");
    start.addEventListener("click", async () => {
      start.disabled = true;
      showError($("agents-error"), null);
      try {
        const { run } = await api("api/agent-runs", { method: "POST", body: { agent: agent.id, documents: [{ sample: docSelect.value }] } });
        track(run);
        show(run.id);
      } catch (e) {
        showError($("agents-error"), e);
      } finally {
        start.disabled = false;
      }
    });
    const gates = (agent.actions ?? []).filter((a) => a.approval && a.approval !== "none");
    return h("li", { class: "agent", "data-agent": agent.id },
      h("div", { class: "agent-head" }, h("strong", {}, agent.name), h("span", { class: "muted small" }, `v${agent.version}`)),
      typeof agent.description === "string" ? h("p", { class: "small" }, agent.description) : null,
      h("ol", { class: "steps" }, agent.tasks.map((t) =>
        h("li", { class: `step step-${t.executor}` }, h("span", { class: "tag" }, t.executor === "human" ? "person" : "agent"), t.title))),
      gates.length ? h("p", { class: "small muted" }, "Sign-off: ", gates.map((g) => h("code", {}, `${g.name} (${g.approval})`))) : null,
      h("div", { class: "row start-row" }, docSelect, start));
  }

  function show(id) {
    current = id;
    renderList();
    refresh(id);
  }

  async function refresh(id) {
    clearTimeout(timer);
    try {
      const run = await api(`api/agent-runs/${id}`);
      track(run).error = null;
      if (ACTIVE.has(run.status) && id === current) timer = setTimeout(() => refresh(id), 700);
    } catch (e) {
      const entry = runs.get(id);
      if (entry) entry.error = e;
    }
    renderList();
    if (id === current) renderRun();
  }

  function renderList() {
    $("runs").replaceChildren(...[...runs.values()].reverse().map(({ run }) =>
      h("li", {}, h("button", { type: "button", class: `run-link${run.id === current ? " current" : ""}`, "aria-current": run.id === current ? "true" : null,
        onclick: () => show(run.id) }, h("span", {}, run.agent?.name ?? "Agent run"), pill(run.status), h("code", { class: "muted small" }, run.id)))));
    $("runs-empty").hidden = runs.size > 0;
  }

  function renderRun() {
    const entry = runs.get(current);
    const box = $("run-detail");
    if (!entry) return;
    const { run } = entry;
    const total = run.progress?.tasks?.total ?? run.tasks?.length ?? 0;
    const done = run.progress?.tasks?.completed ?? 0;
    const parts = [
      h("div", { class: "run-head" }, h("h3", {}, run.agent?.name ?? "Agent run"), pill(run.status), h("code", { class: "muted small" }, run.id)),
      h("div", { class: "progress", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": String(total), "aria-valuenow": String(done), "aria-label": "Steps completed" },
        h("span", { style: `width:${total ? (100 * done) / total : 0}%` })),
      h("p", { class: "small muted" }, `${done} of ${total} steps done`),
    ];
    if (entry.error) parts.push(h("div", {}, errorOf(entry.error)));
    if (run.waiting?.summary) parts.push(h("p", { class: "waiting" }, run.waiting.summary));
    parts.push(h("ol", { class: "ledger" }, (run.tasks ?? []).map((t) =>
      h("li", { class: `task t-${t.status}`, "data-task": t.id },
        h("span", { class: "task-icon", "aria-hidden": "true" }, ICON[t.status] ?? "•"),
        h("div", {}, h("div", {}, h("strong", {}, t.title), " ", h("span", { class: "tag" }, t.executor === "human" ? "person" : "agent"), " ", pill(t.status)),
          t.summary ? h("p", { class: "small muted" }, t.summary) : null)))));
    if (run.status === "waiting") {
      for (const a of run.approvals ?? []) parts.push(approvalCard(run, a));
      for (const t of (run.tasks ?? []).filter((x) => x.executor === "human" && x.status === "ready")) parts.push(taskCard(run, t));
    }
    if (run.error) parts.push(errorOf(run.error));
    if (run.result !== undefined && run.result !== null) {
      parts.push(h("div", { class: "result" }, h("h4", {}, run.incomplete ? "Result (incomplete: some work was rejected)" : "Result"),
        h("p", {}, typeof run.result === "string" ? run.result : JSON.stringify(run.result))));
    }
    const files = run.output?.files ?? [];
    if (files.length) {
      parts.push(h("div", { class: "files" }, h("h4", {}, "Output files"),
        h("ul", {}, files.map((f) => h("li", {}, h("a", { href: /^https?:\/\//.test(f.url ?? "") ? f.url : null, target: "_blank", rel: "noopener" }, f.name ?? f.id ?? "file"), " ", h("span", { class: "muted small" }, "signed link, about an hour"))))));
    }
    parts.push(h("div", { class: "timeline" }, h("h4", {}, "Webhook events for this run"),
      entry.events.length
        ? h("ul", {}, entry.events.map((d) => h("li", { class: d.verified ? "ok" : "bad" },
          h("span", { class: `badge ${d.verified ? "good" : "bad"}` }, d.verified ? "verified" : d.code), " ", h("code", {}, d.type ?? "?"),
          h("span", { class: "muted small" }, ` ${new Date(d.receivedAt).toLocaleTimeString()}`))))
        : h("p", { class: "muted small" }, config.webhooks ? "None yet: events arrive as the run moves." : "This backend has no webhook endpoint (set DEMO_PUBLIC_URL); the run is read instead.")));
    box.replaceChildren(...parts);
  }

  function approvalCard(run, a) {
    const note = h("textarea", { rows: "2", "aria-label": `Note for ${a.action}`, placeholder: "Note (required to reject)" });
    const err = h("div", {});
    const decide = (decision) => async (ev) => {
      if (decision === "reject" && !note.value.trim()) {
        showError(err, { code: "note_required", message: "A rejection needs a note: say why, the agent records it." });
        note.focus();
        return;
      }
      ev.currentTarget.disabled = true;
      try {
        await api(`api/agent-runs/${run.id}/approvals/${a.id}`, { method: "POST", body: { decision, note: note.value.trim() } });
        await refresh(run.id);
      } catch (e) {
        showError(err, e);
        ev.currentTarget.disabled = false;
      }
    };
    return h("section", { class: "approval", "data-approval": a.id, "aria-label": `Sign-off ${a.action}` },
      h("h4", {}, "Sign-off: ", h("code", {}, a.action), " ", h("span", { class: "tag" }, a.kind === "before" ? "before it runs" : "of its output")),
      a.rationale ? h("p", { class: "small" }, a.rationale) : null,
      Object.keys(a.params ?? {}).length
        ? h("dl", { class: "params" }, Object.entries(a.params).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "string" ? v : JSON.stringify(v))]))
        : h("p", { class: "small muted" }, "No proposed inputs."),
      (a.files ?? []).length ? h("p", { class: "small" }, "Files: ", a.files.map((f) => h("code", {}, f.name))) : null,
      note,
      h("div", { class: "row" },
        h("button", { type: "button", class: "primary approve", onclick: decide("approve") }, "Approve"),
        h("button", { type: "button", class: "danger reject", onclick: decide("reject") }, "Reject")),
      err);
  }

  function taskCard(run, t) {
    const note = h("textarea", { rows: "2", "aria-label": `Note for ${t.title}`, placeholder: "What did you do? (optional)" });
    const err = h("div", {});
    return h("section", { class: "human-task", "data-task": t.id, "aria-label": `Your step: ${t.title}` },
      h("h4", {}, "Your step: ", t.title), note,
      h("div", { class: "row" }, h("button", { type: "button", class: "primary complete", onclick: async (ev) => {
        ev.currentTarget.disabled = true;
        try {
          await api(`api/agent-runs/${run.id}/tasks/${t.id}/complete`, { method: "POST", body: { note: note.value.trim() } });
          await refresh(run.id);
        } catch (e) {
          showError(err, e);
          ev.currentTarget.disabled = false;
        }
      } }, "Mark as done")), err);
  }

  onDelivery((d) => {
    const entry = d.processingId ? runs.get(d.processingId) : null;
    if (!entry) {
      // the backend replays its deliveries as the page connects, maybe before the list of its runs arrives
      if (/^agr_/.test(d.processingId ?? "")) early.set(d.processingId, [...(early.get(d.processingId) ?? []), d]);
      return;
    }
    entry.events.push(d);
    if (d.verified && d.processingId === current) refresh(current);
    else if (d.processingId === current) renderRun();
  });

  $("agents-reload").addEventListener("click", loadAgents);
  loadAgents();
  loadRuns();
  return { refreshCurrent: () => current && refresh(current) };
}

const ICON = { pending: "○", ready: "◔", in_progress: "◑", completed: "●", skipped: "⊘" };

function errorOf(e) {
  const box = h("div", {});
  showError(box, e);
  return box;
}
