// The extraction schema editor: a textarea over a backdrop that marks the offending part. Every edit is checked in
// the page (JSON syntax, then the wasm `validateExtractionSchema`) before anything can be sent.
import { validateExtractionSchema } from "../pkg/index.js";
import { h } from "./ui.js";

/** Splits `schema.properties.a.items[0]` into `["properties", "a", "items", "0"]` (the leading `schema` dropped). */
export function pathSegments(path) {
  return path.replace(/\[(\d+)\]/g, ".$1").split(".").filter(Boolean).slice(1);
}

/** Where `segs` points in the JSON `text`: `[start, end]` of the deepest member found along the path. */
export function locate(text, segs) {
  let i = 0;
  let best = null;
  let bestDepth = -1;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const str = () => {
    const s = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return [s, i];
  };
  const note = (depth, span) => {
    if (depth > bestDepth) [best, bestDepth] = [span, depth];
  };
  const value = (depth, onPath) => {
    ws();
    const start = i;
    const c = text[i];
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      ws();
      if (text[i] === close) return [start, ++i];
      for (let n = 0; ; n++) {
        ws();
        let key = String(n);
        let ks = i;
        if (c === "{") {
          const [a, b] = str();
          key = JSON.parse(text.slice(a, b));
          ks = a;
          ws();
          i++; // the colon
        }
        const hit = onPath && depth < segs.length && key === segs[depth];
        const [, ve] = value(depth + 1, hit);
        if (hit) note(depth, [ks, ve]);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        i++;
        return [start, i];
      }
    }
    if (c === '"') return str();
    while (i < text.length && !/[\s,\]}]/.test(text[i])) i++;
    return [start, i];
  };
  value(0, true);
  return best;
}

/**
 * Checks `text`: `{ ok: true, schema }`, or `{ ok: false, code, path, message, span }` where `span` is the part of the
 * text to mark.
 */
export function checkSchema(text) {
  let schema;
  try {
    schema = JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec(e.message);
    const at = pos ? Number(pos[1]) : text.length;
    return { ok: false, code: "invalid_json", path: null, message: e.message, span: [at, Math.min(text.length, at + 1)] };
  }
  try {
    validateExtractionSchema(schema);
    return { ok: true, schema };
  } catch (e) {
    const m = /(?:^|\s)(schema(?:[.[][^\s:]*)?): (.*)$/.exec(e.message ?? "");
    const path = m ? m[1] : "schema";
    const segs = pathSegments(path);
    const span = segs.length ? locate(text, segs) : null;
    return { ok: false, code: e.code ?? "invalid_schema", path, message: m ? m[2] : e.message, span };
  }
}

/** Wires the editor: `onChange(result)` after each check. Returns `{ set(text), result() }`. */
export function schemaEditor(textarea, backdrop, status, onChange) {
  let last = { ok: false };
  const render = () => {
    const text = textarea.value;
    last = checkSchema(text);
    if (last.ok || !last.span) {
      backdrop.replaceChildren(text + "\n");
    } else {
      const [a, b] = last.span;
      backdrop.replaceChildren(text.slice(0, a), h("mark", {}, text.slice(a, b) || " "), text.slice(b) + "\n");
    }
    textarea.setAttribute("aria-invalid", String(!last.ok));
    status.className = `schema-status ${last.ok ? "ok" : "bad"}`;
    if (last.ok) {
      const n = Object.keys(last.schema.properties ?? {}).length;
      status.replaceChildren(h("span", { class: "badge good" }, "valid"),
        ` Checked in your browser by validateExtractionSchema: ${n} top-level field${n === 1 ? "" : "s"}.`);
    } else {
      status.replaceChildren(h("code", { class: "badge bad" }, last.code),
        last.path ? h("code", { class: "path" }, last.path) : null, " ", last.message,
        h("span", { class: "muted" }, " Nothing is sent until this is fixed."));
    }
    onChange(last);
  };
  let timer;
  textarea.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(render, 120);
  });
  textarea.addEventListener("scroll", () => {
    backdrop.scrollTop = textarea.scrollTop;
    backdrop.scrollLeft = textarea.scrollLeft;
  });
  return {
    set(text) {
      textarea.value = text;
      render();
    },
    result: () => last,
  };
}
