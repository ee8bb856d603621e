// The code blocks of the documentation and what each says about how it runs.
//
// Every fenced block whose language is JS or TS must be preceded (blank lines apart) by one directive, an HTML
// comment that Markdown renderers do not show:
//
//   <!-- run: KIND key=value key="a value" ... -->   run it (KIND below), and type-check it when it is TypeScript
//   <!-- fragment: CONTEXT -->                        a piece on purpose: type-checked inside CONTEXT (contexts.mjs)
//   <!-- html: NAME -->                               (before an ```html block) the body of a page block's page
//
// A block without a directive is a failure of its own, so no block goes untested by omission.

/** The languages that are run; every other fence (sh, json, text, html ...) is prose. */
const LANGS = { js: "js", javascript: "js", mjs: "js", cjs: "js", jsx: "js", ts: "ts", typescript: "ts", tsx: "ts" };

/**
 * `{ file, line, lang, code, directive, html }` for every fenced block of `markdown`. `line` is the 1-based line of
 * the opening fence; `lang` is "js", "ts" or the fence's own word for other blocks; `directive` is
 * `{ kind, context?, attrs }` or null (also for malformed comments: `directiveError` then says why).
 */
export function blocksOf(file, markdown) {
  const lines = markdown.split("\n");
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, word] = open;
    let end = i + 1;
    while (end < lines.length && !(lines[end].trimStart().startsWith(fence) && lines[end].trim() === fence.trim())) end++;
    const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join("\n") + "\n";
    const lang = LANGS[word.toLowerCase()] ?? word.toLowerCase();
    let d = i - 1;
    while (d >= 0 && lines[d].trim() === "") d--;
    const comment = d >= 0 ? /^\s*<!--\s*(run|fragment|html)\b(.*?)-->\s*$/.exec(lines[d]) : null;
    let directive = null;
    let directiveError;
    if (comment) {
      try {
        directive = parseDirective(comment[1], comment[2]);
      } catch (e) {
        directiveError = e.message;
      }
    }
    out.push({ file, line: i + 1, lang, code, directive, directiveError });
    i = end;
  }
  return out;
}

/** Parses `run: KIND k=v ...`, `fragment: CONTEXT`, `html: NAME`. */
function parseDirective(head, rest) {
  const body = rest.trim();
  if (!body.startsWith(":") && head !== "fragment") throw new Error(`directive "${head}" needs ": ..."`);
  const tokens = [];
  const re = /\s*([\w.-]+)(?:=("(?:[^"\\]|\\.)*"|\S+))?/gy;
  const text = body.replace(/^:\s*/, "");
  let m;
  while (re.lastIndex < text.length && (m = re.exec(text))) {
    if (m[0].trim() === "") break;
    // A quoted value keeps its backslashes (a regex's `\d`), but for `\"`, a quote inside it.
    const value = m[2] === undefined ? true : m[2].startsWith('"') ? m[2].slice(1, -1).replace(/\\"/g, '"') : m[2];
    tokens.push([m[1], value]);
  }
  if (re.lastIndex < text.trimEnd().length) throw new Error(`cannot read the directive from "${text.slice(re.lastIndex)}"`);
  if (head === "fragment") return { kind: "fragment", context: tokens[0]?.[0] ?? "module", attrs: Object.fromEntries(tokens.slice(1)) };
  if (head === "html") return { kind: "html", name: tokens[0]?.[0], attrs: {} };
  const [kind, ...attrs] = tokens;
  if (!kind || kind[1] !== true) throw new Error("a run directive starts with its kind");
  return { kind: kind[0], attrs: Object.fromEntries(attrs) };
}

/** `[text, href, line]` of every Markdown link and image of `markdown`, code spans and fenced blocks left out. */
export function linksOf(markdown) {
  const out = [];
  let fence = null;
  markdown.split("\n").forEach((line, i) => {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1];
      else if (line.trim() === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const text = line.replace(/`[^`]*`/g, "");
    for (const m of text.matchAll(/!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push([m[1], m[2], i + 1]);
    for (const m of text.matchAll(/^\s*\[([^\]]+)\]:\s*(\S+)/g)) out.push([m[1], m[2], i + 1]);
  });
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
export function anchorOf(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of every heading of `markdown` (duplicates numbered as GitHub numbers them). */
export function anchorsOf(markdown) {
  const seen = new Map();
  const out = new Set();
  let fence = null;
  for (const line of markdown.split("\n")) {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1];
      else if (line.trim() === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = anchorOf(h[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}
