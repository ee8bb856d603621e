// Panel 1: documents. Pick a sample or a URL, edit the schema (checked in the page), extract with citations (values
// next to the document text, each cited span marked), parse and redact; progress while a run is queued/processing.
import { api, h, showError, pill } from "./ui.js";
import { schemaEditor } from "./schema-editor.js";

const $ = (id) => document.getElementById(id);
const COLORS = 6;

export function documentsPanel(config) {
  const state = { doc: { sample: config.samples[0].id }, text: null, running: 0, extract: null };
  const editor = schemaEditor($("schema"), $("schema-backdrop"), $("schema-status"), () => buttons());

  // Document choices: one radio per sample, plus "a URL".
  const choices = $("doc-choices");
  for (const s of config.samples) {
    choices.append(h("label", { class: "choice" },
      h("input", { type: "radio", name: "doc", value: s.id, checked: s.id === state.doc.sample }),
      h("span", { class: "choice-body" }, h("strong", {}, s.title), h("span", { class: "muted small" }, s.description))));
  }
  choices.append(h("label", { class: "choice" },
    h("input", { type: "radio", name: "doc", value: "url" }),
    h("span", { class: "choice-body" }, h("strong", {}, "A URL"), h("span", { class: "muted small" }, "Any document the service can fetch."))));
  const url = $("doc-url");

  const select = () => {
    const v = choices.querySelector("input:checked")?.value;
    url.closest(".url-row").hidden = v !== "url";
    if (v === "url") {
      state.doc = { url: url.value.trim() };
      state.text = null;
    } else {
      const s = config.samples.find((x) => x.id === v);
      state.doc = { sample: s.id };
      state.text = s.text;
      editor.set(JSON.stringify(s.schema, null, 2));
      $("doc-link").replaceChildren(h("a", { href: `samples/${s.file}`, target: "_blank", rel: "noopener" }, `Open ${s.file}`));
    }
    state.extract = null;
    renderExtraction();
    buttons();
  };
  choices.addEventListener("change", select);
  url.addEventListener("input", () => {
    state.doc = { url: url.value.trim() };
    buttons();
  });

  function buttons() {
    const docOk = Boolean(state.doc.sample || /^https?:\/\/\S+$/.test(state.doc.url ?? ""));
    $("run-extract").disabled = !docOk || !editor.result().ok;
    $("run-parse").disabled = !docOk;
    $("run-redact").disabled = !docOk || !document.querySelector("#redact-cats input:checked");
  }
  document.querySelectorAll("#redact-cats input").forEach((c) => c.addEventListener("change", buttons));

  // One run: create (202 at once), show its progress, wait for it (waitFor on the backend), hand back the result.
  async function run(kind, body) {
    const row = h("li", { class: "job" }, h("span", { class: "job-kind" }, kind), pill("queued"),
      h("code", { class: "job-id muted" }, "…"), h("span", { class: "job-time muted" }, ""), h("span", { class: "spinner", "aria-hidden": "true" }));
    $("jobs").prepend(row);
    const t0 = performance.now();
    const tick = setInterval(() => {
      row.querySelector(".job-time").textContent = `${((performance.now() - t0) / 1000).toFixed(1)} s`;
    }, 100);
    const setStatus = (s) => row.querySelector(".pill").replaceWith(pill(s));
    try {
      const created = await api(`api/${kind}`, { method: "POST", body: { document: state.doc, ...body } });
      row.querySelector(".job-id").textContent = created.run.id;
      setStatus(created.run.status);
      const done = created.run.status === "processed" ? { run: created.run } : await api(`api/runs/${created.run.id}/wait`);
      setStatus(done.run.status);
      if (done.run.status !== "processed") {
        throw Object.assign(new Error(done.run.error?.message ?? `the run ended ${done.run.status}`),
          { code: done.run.error?.code ?? `run_${done.run.status}` });
      }
      return done;
    } catch (e) {
      setStatus("failed");
      throw e;
    } finally {
      clearInterval(tick);
      row.querySelector(".job-time").textContent = `${((performance.now() - t0) / 1000).toFixed(1)} s`;
      row.querySelector(".spinner").remove();
    }
  }

  async function guarded(button, fn) {
    showError($("doc-error"), null);
    button.setAttribute("aria-busy", "true");
    button.disabled = true;
    try {
      await fn();
    } catch (e) {
      showError($("doc-error"), e);
    } finally {
      button.removeAttribute("aria-busy");
      buttons();
    }
  }

  $("run-extract").addEventListener("click", (e) => guarded(e.currentTarget, async () => {
    const check = editor.result();
    if (!check.ok) return;
    const { run: r } = await run("extract", { schema: check.schema });
    state.extract = r.output;
    if (!state.text) {
      const { run: p } = await run("parse", {});
      state.text = markdownText(p.output);
    }
    renderExtraction();
  }));

  $("run-parse").addEventListener("click", (e) => guarded(e.currentTarget, async () => {
    const { run: r } = await run("parse", {});
    const pages = r.output?.json?.pages ?? [];
    $("parse-out").replaceChildren(
      h("p", { class: "muted small" }, `${r.id} · ${r.output?.json?.pageCount ?? pages.length} page(s) · markdown:`),
      h("pre", { class: "doc", tabindex: "0" }, r.output?.markdown ?? ""));
    if (!state.text) state.text = markdownText(r.output);
  }));

  $("run-redact").addEventListener("click", (e) => guarded(e.currentTarget, async () => {
    const categories = [...document.querySelectorAll("#redact-cats input:checked")].map((c) => c.value);
    const { run: r, outputText } = await run("redact", { categories, mode: $("redact-mode").value });
    const counts = Object.entries(r.output?.redactions ?? {}).map(([k, n]) => h("span", { class: "chip" }, `${k}: ${n}`));
    const parts = (outputText ?? "").split(/(\[REDACTED:[A-Z]+\])/);
    $("redact-out").replaceChildren(
      h("p", { class: "muted small" }, `${r.id} · new file `, h("code", {}, r.output?.file?.name ?? "?"), " · ", ...counts),
      h("pre", { class: "doc", tabindex: "0" }, ...parts.map((p, i) => (i % 2 ? h("span", { class: "redacted" }, p) : p))));
  }));

  function renderExtraction() {
    const out = state.extract;
    const text = state.text;
    const table = $("values");
    const docView = $("doc-text");
    if (!out) {
      table.replaceChildren(h("p", { class: "muted empty" }, "Run an extraction to see the values and where they come from."));
      docView.replaceChildren(text ?? "The text appears here once the document is parsed.");
      return;
    }
    const value = out.value ?? {};
    const citations = out.citations ?? {};
    const fields = flatten(value);
    const ranges = [];
    const rows = fields.map(([path, v], n) => {
      const color = n % COLORS;
      const cites = (citations[path] ?? []).filter((c) => !c.notFound && c.text);
      for (const c of cites) {
        const at = text ? text.indexOf(c.text) : -1;
        if (at >= 0) ranges.push({ start: at, end: at + c.text.length, path, color, value: v });
      }
      const conf = Math.max(0, ...cites.map((c) => c.confidence ?? 0));
      return h("tr", { "data-field": path, tabindex: "0", class: `c${color}` },
        h("th", { scope: "row" }, h("div", { class: "field" }, h("span", { class: "swatch", "aria-hidden": "true" }), h("span", {}, ...path.split(".").flatMap((p, i) => (i ? [".", h("wbr"), p] : [p]))))),
        h("td", { class: v === null ? "muted" : "value" }, v === null ? "not found" : String(v)),
        h("td", { class: "conf", title: `confidence ${conf} of 5` }, cites.length ? `${"●".repeat(conf)}${"○".repeat(5 - conf)}` : "—"));
    });
    table.replaceChildren(h("table", { class: "values" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Field"), h("th", { scope: "col" }, "Value"), h("th", { scope: "col" }, "Cited"))),
      h("tbody", {}, rows)));
    if (out.citationsOmitted) table.append(h("p", { class: "muted small" }, "Citations were dropped for size."));
    // The document with each cited span marked (its value in bold inside the line).
    ranges.sort((a, b) => a.start - b.start);
    const nodes = [];
    let pos = 0;
    for (const r of ranges) {
      if (r.start < pos) continue;
      nodes.push(text.slice(pos, r.start));
      const line = text.slice(r.start, r.end);
      const vi = r.value === null ? -1 : line.indexOf(String(r.value));
      nodes.push(h("mark", { class: `cite c${r.color}`, "data-field": r.path, title: r.path },
        ...(vi >= 0 ? [line.slice(0, vi), h("b", {}, line.slice(vi, vi + String(r.value).length)), line.slice(vi + String(r.value).length)] : [line])));
      pos = r.end;
    }
    nodes.push(text ? text.slice(pos) : "");
    docView.replaceChildren(...nodes);
    const focus = (path, on) => {
      for (const m of docView.querySelectorAll("mark")) m.classList.toggle("active", on && m.dataset.field === path);
      if (on) docView.querySelector(`mark[data-field="${CSS.escape(path)}"]`)?.scrollIntoView({ block: "nearest" });
    };
    for (const tr of table.querySelectorAll("tbody tr")) {
      for (const [ev, on] of [["mouseenter", true], ["mouseleave", false], ["focus", true], ["blur", false]]) {
        tr.addEventListener(ev, () => focus(tr.dataset.field, on));
      }
    }
  }

  select();
}

/** `{a: {b: 1}, c: 2}` as `[["a.b", 1], ["c", 2]]` (arrays as `a[0]`). */
function flatten(v, prefix = "") {
  if (v && typeof v === "object") {
    const entries = Array.isArray(v) ? v.map((x, i) => [`${prefix}[${i}]`, x]) : Object.entries(v).map(([k, x]) => [prefix ? `${prefix}.${k}` : k, x]);
    return entries.flatMap(([p, x]) => (x && typeof x === "object" ? flatten(x, p) : [[p, x]]));
  }
  return [[prefix, v]];
}

function markdownText(output) {
  const pages = output?.json?.pages;
  if (Array.isArray(pages) && pages.length) return pages.map((p) => p.text ?? "").join("\n");
  return (output?.markdown ?? "").replace(/<!-- page \d+ -->\n?/g, "");
}
