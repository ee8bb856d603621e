// Writes the documentation site: `node www/site/build.mjs [--out DIR] [--pkg DIR]` (what `cargo xtask site` runs;
// default out target/site/, pkg pkg/). One folder of static files:
//
//   index.html                the README (its quick starts) as the home page
//   docs/*.html               the guides of docs/ (docs/README.md is docs/index.html)
//   api.html, CHANGELOG.html, MIGRATION.html, ...   the other Markdown files the pages link to
//   playground/               the playground (www/playground/build.mjs)
//   assets/                   the stylesheet, the runner of the examples (run.js), the TypeScript stripper (ts.js),
//                             and the modules a page example imports instead of Node's (assets/node/*.js)
//   pkg/                      the package's browser entries and what they load
//   samples/                  the documents the examples read (contract.txt, invoice.pdf, note.md)
//
// Markdown is rendered here, at build time, by marked (GitHub-flavoured Markdown) with highlight.js: every page shows
// its text without a script. Every link between Markdown files becomes a link between pages; a link that resolves to
// no page, or to no heading of it, fails the build with its file and line. Every URL is relative, and nothing is
// loaded from another origin, so any static file server serves the folder, from a sub-path as from the root.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build as esbuild } from "esbuild";
import hljs from "highlight.js";
import { Marked } from "marked";
import { anchorOf, anchorsOf, blocksOf, linksOf } from "../../tests/docs/blocks.mjs";
import { buildPlayground, copy, packageFiles, sizeOf } from "../playground/build.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));

/** The package's browser entries a page example may import, and where the page's import map sends each. */
const PKG_ENTRIES = ["index.js", "webhooks/index.js", "realtime/index.js", "testing/index.js", "emulator/index.js"];

/**
 * The import map of every page (paths from the site's root). `docauto` and `docauto/emulator` are small modules that
 * re-export the package (assets/docauto.js: `DocAuto` with `dangerouslyAllowBrowser` set, the key being the page
 * emulator's; assets/emulator.js: `startEmulator` serving in the page); the `node:` modules the examples import are
 * the page's stand-ins (assets/node/).
 */
export const IMPORTS = {
  docauto: "assets/docauto.js",
  "docauto/webhooks": "pkg/webhooks/index.js",
  "docauto/realtime": "pkg/realtime/index.js",
  "docauto/testing": "pkg/testing/index.js",
  "docauto/emulator": "assets/emulator.js",
  "node:fs/promises": "assets/node/fs-promises.js",
  "node:test": "assets/node/test.js",
  "node:assert/strict": "assets/node/assert.js",
  "node:http": "assets/node/http.js",
};

/** The Markdown files that are always pages (when present); every Markdown file they link to becomes one too. */
const SEEDS = ["README.md", "api.md", "CHANGELOG.md", "MIGRATION.md"];

/** The site's URL of a Markdown file: README.md is its folder's index.html, any other X.md is X.html. */
export function pageOf(md) {
  const p = md.split("\\").join("/");
  return /(^|\/)README\.md$/i.test(p) ? p.replace(/README\.md$/i, "index.html") : p.replace(/\.md$/i, ".html");
}

/** An error of the build that names the Markdown file and line it comes from. */
class SiteError extends Error {}

/** The text of a page's first `# ` heading, else its file name. */
function titleOf(md, text) {
  const h = /^#\s+(.+?)\s*#*\s*$/m.exec(text);
  return h ? h[1].replace(/`/g, "") : md;
}

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

/** A relative URL from page `from` to site path `to` (both relative to the site's root, posix). */
function rel(from, to) {
  const r = posix.relative(posix.dirname(from), to);
  return r === "" ? posix.basename(to) : r;
}

// ---------------------------------------------------------------------------------------------------------------
// Where each example runs

/** The modules a page can give an example (the import map above). */
const PAGE_MODULES = new Set(Object.keys(IMPORTS));

/** The modules a block imports at load (static imports and re-exports; `import type` is erased, so not counted). */
export function staticImports(code) {
  const out = [];
  for (const m of code.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^;'"]*?\sfrom\s*)?["']([^"']+)["']/gm)) out.push(m[1]);
  return out;
}

const COMMANDS = {
  node: ["Runs in Node", "node example.mjs"],
  cjs: ["Runs in Node as CommonJS", "node example.cjs"],
  deno: ["Runs in Deno", "deno run -A example.ts"],
  bun: ["Runs in Bun", "bun example.ts"],
  "node-test": ["Runs in Node's test runner", "node --test example.test.mjs"],
  "node-server": ["A Node server", "node server.mjs"],
  "deno-server": ["A Deno server", "deno run -A server.ts"],
  "bun-server": ["A Bun server", "bun server.ts"],
  worker: ["A Cloudflare Worker", "npx wrangler dev"],
  "route-handler": ["A route handler (Next.js, Vercel)", "npx next dev"],
  edge: ["Runs in Vercel's edge runtime", "npx vercel dev"],
  vite: ["Configures Vite's dev server", "npx vite"],
};

/**
 * Whether a code block gets a Run button in the page, from its directive (tests/docs/blocks.mjs) and the modules it
 * imports: `{ run: true }`, `{ run: "with-page" }` (the server part of a page example, started by that example's
 * Run), or `{ run: false, where }` (HTML: where it runs, its command, and why not here).
 */
export function placeOf(block, pageBackends) {
  const d = block.directive;
  if (!d) return { run: false, where: "" };
  if (d.kind === "fragment") return { run: false, where: "A fragment: it is type-checked by the package's tests, not run on its own." };
  const [where, command] = COMMANDS[d.kind] ?? [];
  const says = (why) => ({
    run: false,
    where: `${where ?? `Runs as ${escapeHtml(d.kind)}`}${command ? `: <code>${escapeHtml(command)}</code>` : ""}.${why ? ` Not in this page: ${why}.` : ""}`,
  });
  const needs = [];
  if (d.attrs.services) needs.push(`it needs ${d.attrs.services.split(",").map((s) => ({ redis: "Redis", postgres: "PostgreSQL" })[s] ?? s).join(" and ")}`);
  if (d.attrs.d1) needs.push(`it needs a D1 database (${escapeHtml(d.attrs.d1)})`);
  if (d.attrs["durable-objects"]) needs.push("it needs Durable Objects");
  const missing = staticImports(block.code).filter((m) => !PAGE_MODULES.has(m));
  if (missing.length) needs.push(`it imports ${missing.map((m) => `<code>${escapeHtml(m)}</code>`).join(", ")}, which a page does not have`);
  switch (d.kind) {
    case "node":
    case "node-test":
    case "worker":
    case "route-handler":
      return needs.length ? says(needs.join("; ")) : { run: true };
    case "node-server":
      if (!d.attrs.deliveries) {
        if (pageBackends.has(d.attrs.name)) return needs.length ? says(needs.join("; ")) : { run: "with-page" };
        return says(needs.join("; "));
      }
      return needs.length ? says(needs.join("; ")) : { run: true };
    case "page":
      return needs.length ? says(needs.join("; ")) : { run: true };
    case "deno":
    case "deno-server":
      return says("a page has no Deno");
    case "bun":
    case "bun-server":
      return says("a page has no Bun");
    case "cjs":
      return says("a page has no <code>require</code>");
    default:
      return says(needs.join("; "));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Links

/**
 * Resolves a relative link of Markdown file `from`: `{ md, anchor }` (a Markdown file of the repository and the
 * heading), `{ file }` (another file of the repository, copied as it is), or throws a SiteError naming the line.
 */
function resolveLink(root, from, href, line) {
  const [path, anchor] = href.split("#");
  const target = path === "" ? from : posix.normalize(posix.join(posix.dirname(from), decodeURIComponent(path)));
  const where = `${from}:${line}: the link ${href}`;
  if (target.startsWith("..") || !existsSync(join(root, target))) throw new SiteError(`${where} leads to ${target}, which is not in the repository`);
  if (statSync(join(root, target)).isDirectory()) {
    const readme = posix.join(target, "README.md");
    if (existsSync(join(root, readme))) return { md: readme, anchor };
    throw new SiteError(`${where} leads to the folder ${target}, which has no README.md`);
  }
  if (/\.md$/i.test(target)) return { md: target, anchor };
  if (anchor) throw new SiteError(`${where} names #${anchor} in ${target}, which is not a Markdown page`);
  return { file: target };
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering

function highlight(code, lang) {
  const language = { ts: "typescript", js: "javascript", sh: "bash", shell: "bash", html: "xml", toml: "ini", jsonc: "json" }[lang] ?? lang;
  if (language && hljs.getLanguage(language)) return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  return escapeHtml(code);
}

/** The HTML of one page's Markdown, with its links checked and rewritten; `{ html, links: [md...], files: [...] }`. */
function renderMarkdown(root, md, text, pages) {
  // Every link, with its line: a broken one fails here, with the file and line.
  const targets = new Map();
  const problems = [];
  for (const [, href, line] of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || targets.has(href)) continue;
    try {
      targets.set(href, resolveLink(root, md, href, line));
    } catch (e) {
      if (!(e instanceof SiteError)) throw e;
      problems.push(e.message);
    }
  }
  if (problems.length) throw new SiteError(problems.join("\n"));

  // The code blocks, in order, with their directives: the renderer takes them one by one.
  const blocks = blocksOf(md, text);
  const pageBackends = new Set(blocks.filter((b) => b.directive?.kind === "page" && b.directive.attrs.server).map((b) => b.directive.attrs.server));
  let next = 0;
  // The page's ids, heading by heading (GitHub's anchors, duplicates numbered, so each is distinct and in order).
  const anchorSet = anchorsOf(text);
  const anchors = [...anchorSet];
  let heading = 0;
  const page = pageOf(md);
  const linkTo = (href) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return href;
    const t = targets.get(href);
    if (!t) return href;
    if (t.file) return rel(page, `files/${t.file}`);
    return `${t.md === md ? "" : rel(page, pageOf(t.md))}${t.anchor ? `#${t.anchor}` : ""}` || "#";
  };
  let runnable = 0;
  let elsewhere = 0;
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      heading({ tokens, depth, raw }) {
        const id = anchors[heading++] ?? "";
        const base = anchorOf(raw.replace(/^#{1,6}\s+/, "").replace(/\s*#*\s*$/, "").trim());
        if (id !== base && !id.startsWith(`${base}-`)) throw new SiteError(`${md}: the heading "${raw.trim()}" reads differently to the renderer than to GitHub's anchors`);
        const inner = this.parser.parseInline(tokens);
        return `<h${depth} id="${escapeHtml(id)}"><a class="anchor" href="#${escapeHtml(id)}" aria-hidden="true">#</a>${inner}</h${depth}>\n`;
      },
      link({ href, title, tokens }) {
        const inner = this.parser.parseInline(tokens);
        return `<a href="${escapeHtml(linkTo(href))}"${title ? ` title="${escapeHtml(title)}"` : ""}>${inner}</a>`;
      },
      image({ href, title, text: alt }) {
        return `<img src="${escapeHtml(linkTo(href))}" alt="${escapeHtml(alt)}"${title ? ` title="${escapeHtml(title)}"` : ""}>`;
      },
      code({ text: code, lang, codeBlockStyle }) {
        const word = (lang ?? "").trim().split(/\s+/)[0] ?? "";
        if (codeBlockStyle === "indented") return `<pre><code>${escapeHtml(code)}</code></pre>\n`;
        const b = blocks[next++];
        if (!b || b.code.replace(/\s+$/, "") !== code.replace(/\s+$/, "")) {
          throw new SiteError(`${md}: the code block ${b ? `at line ${b.line}` : "at the end"} reads differently to the renderer than to tests/docs/blocks.mjs`);
        }
        const d = b.directive;
        const attrs = [`data-file="${escapeHtml(md)}"`, `data-line="${b.line}"`, `data-lang="${escapeHtml(b.lang)}"`];
        let caption = "";
        if (d?.kind === "html") attrs.push(`data-html-name="${escapeHtml(d.name ?? "")}"`);
        else if (d) {
          attrs.push(`data-kind="${escapeHtml(d.kind)}"`, `data-attrs="${escapeHtml(JSON.stringify(d.attrs))}"`);
          if (d.attrs.name) attrs.push(`data-name="${escapeHtml(d.attrs.name)}"`);
          const place = placeOf(b, pageBackends);
          if (place.run === true) {
            attrs.push('data-run="page"');
            runnable++;
          } else if (place.run === "with-page") {
            attrs.push('data-run="with-page"');
            caption = "The server part of the page example below: its Run starts this server in the page too.";
          } else if (place.where) {
            caption = place.where;
            if (d.kind !== "fragment") elsewhere++;
          }
        }
        const cls = b.lang === "ts" || b.lang === "js" ? ` class="example"` : "";
        return `<div${cls} id="L${b.line}" ${attrs.join(" ")}><pre><code class="hljs language-${escapeHtml(word || "text")}">${highlight(code, word)}</code></pre>${
          caption ? `<p class="where">${caption}</p>` : ""
        }</div>\n`;
      },
      html({ text: raw }) {
        // The directives (`<!-- run: ... -->`) and other comments say nothing to a reader.
        return /^\s*<!--[\s\S]*-->\s*$/.test(raw) ? "" : raw;
      },
    },
  });
  const html = marked.parse(text);
  if (next !== blocks.length) {
    const missed = blocks[next];
    throw new SiteError(`${md}:${missed.line}: the renderer did not see this code block (${blocks.length - next} left)`);
  }
  return {
    html,
    links: [...targets.values()].filter((t) => t.md).map((t) => ({ md: t.md, anchor: t.anchor })),
    files: [...targets.values()].filter((t) => t.file).map((t) => t.file),
    runnable,
    elsewhere,
    anchors: anchorSet,
  };
}

/** The navigation of every page: the home page, the guides, the reference, the history, the playground. */
function navigation(page, pages, guides) {
  const item = (to, label) => {
    const current = to === page ? ' aria-current="page"' : "";
    return `<li><a href="${escapeHtml(rel(page, to))}"${current}>${escapeHtml(label)}</a></li>`;
  };
  const titled = (md) => pages.get(md)?.title ?? md;
  const rest = [...pages.keys()].filter((md) => md !== "README.md" && !guides.includes(md) && !["api.md", "CHANGELOG.md", "MIGRATION.md"].includes(md)).sort();
  return `<nav class="side" aria-label="Documentation">
<ul>
${item("index.html", "Home")}
${item("playground/index.html", "Playground")}
</ul>
<p>Guides</p>
<ul>
${guides.map((md) => item(pageOf(md), titled(md))).join("\n")}
</ul>
<p>Reference</p>
<ul>
${["api.md", "CHANGELOG.md", "MIGRATION.md"].filter((md) => pages.has(md)).map((md) => item(pageOf(md), titled(md))).join("\n")}
${rest.map((md) => item(pageOf(md), titled(md))).join("\n")}
</ul>
</nav>`;
}

function template({ page, title, body, nav, runnable, elsewhere }) {
  const root = rel(page, "index.html").replace(/index\.html$/, "") || "./";
  const imports = Object.fromEntries(Object.entries(IMPORTS).map(([k, v]) => [k, `${root}${v}`]));
  const note =
    runnable > 0
      ? `<p class="run-note">${runnable} example${runnable === 1 ? "" : "s"} on this page run${runnable === 1 ? "s" : ""} in your browser, against an emulator of the service in this page${
          elsewhere ? `; ${elsewhere} other${elsewhere === 1 ? "" : "s"} say${elsewhere === 1 ? "s" : ""} where ${elsewhere === 1 ? "it runs" : "they run"}` : ""
        }.</p>`
      : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="docauto-root" content="${escapeHtml(root)}">
<title>${escapeHtml(title)} · docauto</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(root)}assets/site.css">
<script type="importmap">${JSON.stringify({ imports })}</script>
<script type="module" src="${escapeHtml(root)}assets/run.js"></script>
</head>
<body>
<header class="top"><a class="brand" href="${escapeHtml(rel(page, "index.html"))}">docauto</a><a class="try" href="${escapeHtml(rel(page, "playground/index.html"))}">Playground</a></header>
<div class="layout">
${nav}
<main>
${note}
<article class="doc">
${body}
</article>
</main>
</div>
</body>
</html>
`;
}

// ---------------------------------------------------------------------------------------------------------------
// Files


/**
 * Renders the pages only (no package, no playground): `{ pages: Map<md, { page, title, html }> }`. Throws a
 * SiteError for a broken link or anchor, naming its file and line. `root`: the folder holding the Markdown.
 */
export function renderPages(root) {
  const pages = new Map();
  const files = new Set();
  const todo = SEEDS.filter((md) => existsSync(join(root, md)));
  if (existsSync(join(root, "docs"))) {
    for (const f of readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort()) todo.push(`docs/${f}`);
  }
  const rendered = new Map();
  const anchorChecks = [];
  while (todo.length) {
    const md = todo.shift();
    if (rendered.has(md)) continue;
    const text = readFileSync(join(root, md), "utf8");
    const out = renderMarkdown(root, md, text, pages);
    rendered.set(md, { ...out, text, title: titleOf(md, text) });
    for (const l of out.links) {
      if (!rendered.has(l.md)) todo.push(l.md);
      if (l.anchor) anchorChecks.push({ from: md, ...l });
    }
    for (const f of out.files) files.add(f);
  }
  const problems = [];
  for (const { from, md, anchor } of anchorChecks) {
    if (rendered.get(md).anchors.has(anchor)) continue;
    const text = rendered.get(from).text;
    const lines = linksOf(text).filter(([, href]) => href.endsWith(`#${anchor}`)).map(([, , line]) => line);
    problems.push(`${from}:${lines.join(",")}: the link to ${md}#${anchor} names no heading of ${md}`);
  }
  if (problems.length) throw new SiteError(problems.join("\n"));
  for (const [md, r] of rendered) pages.set(md, { page: pageOf(md), title: r.title, ...r });
  return { pages, files };
}

/** The guides in the order docs/README.md lists them (then any other page of docs/). */
function guideOrder(pages) {
  const guides = [...pages.keys()].filter((md) => md.startsWith("docs/"));
  const index = pages.get("docs/README.md");
  const order = ["docs/README.md"];
  if (index) for (const [, href] of linksOf(index.text)) if (!/^[a-z]+:/i.test(href)) order.push(posix.normalize(posix.join("docs", href.split("#")[0])));
  return [...new Set([...order.filter((md) => guides.includes(md)), ...guides.sort()])];
}

/**
 * Writes the site into `out` (emptied first): the pages of `root`'s Markdown, the assets, the package copy from
 * `pkg`, the samples and (unless `playground: false`) the playground. Resolves to `{ files, bytes, pages, parts }`.
 */
export async function buildSite({ root = ROOT, out = join(ROOT, "target", "site"), pkg = join(ROOT, "pkg"), playground = true } = {}) {
  const { pages, files } = renderPages(root);
  for (const e of PKG_ENTRIES) statSync(join(pkg, e)); // a clear error before anything is removed
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const guides = guideOrder(pages);
  for (const [md, p] of pages) {
    const nav = navigation(p.page, pages, guides);
    const html = template({ page: p.page, title: md === "README.md" ? "docauto" : p.title, body: p.html, nav, runnable: p.runnable, elsewhere: p.elsewhere });
    mkdirSync(dirname(join(out, p.page)), { recursive: true });
    writeFileSync(join(out, p.page), html);
  }
  for (const f of files) copy(join(root, f), join(out, "files", f));

  // assets: the stylesheet (ours, then highlight.js's GitHub theme), the runner and its modules, the TS stripper
  const theme = readFileSync(join(ROOT, "node_modules/highlight.js/styles/github.css"), "utf8");
  mkdirSync(join(out, "assets", "node"), { recursive: true });
  writeFileSync(join(out, "assets", "site.css"), `${readFileSync(join(HERE, "site.css"), "utf8")}\n${theme}`);
  for (const f of ["run.js", "router.js", "docauto.js", "emulator.js"]) copy(join(HERE, f), join(out, "assets", f));
  for (const f of readdirSync(join(HERE, "node"))) copy(join(HERE, "node", f), join(out, "assets", "node", f));
  await esbuild({
    entryPoints: [join(HERE, "ts.js")],
    bundle: true,
    format: "esm",
    minify: true,
    target: "es2022",
    platform: "browser",
    outfile: join(out, "assets", "ts.js"),
    logLevel: "error",
    legalComments: "eof",
  });

  for (const f of packageFiles(pkg, PKG_ENTRIES)) copy(f, join(out, "pkg", relative(pkg, f)));
  const { SAMPLES, sampleBytes } = await import(pathToFileURL(join(ROOT, "www", "samples.mjs")).href);
  mkdirSync(join(out, "samples"), { recursive: true });
  for (const s of SAMPLES) writeFileSync(join(out, "samples", s.file), sampleBytes(s));

  if (playground) await buildPlayground({ out: join(out, "playground"), pkg });
  const parts = {};
  for (const part of ["pkg", "assets", "playground", "samples"]) if (existsSync(join(out, part))) parts[part] = sizeOf(join(out, part));
  const total = sizeOf(out);
  parts.pages = {
    files: total.files - Object.values(parts).reduce((n, p) => n + p.files, 0),
    bytes: total.bytes - Object.values(parts).reduce((n, p) => n + p.bytes, 0),
  };
  return { ...total, pages: [...pages.values()].map((p) => p.page), parts };
}

function args(argv) {
  const o = { out: join(ROOT, "target", "site"), pkg: join(ROOT, "pkg") };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (k === "--out" && v) o.out = resolve(v);
    else if (k === "--pkg" && v) o.pkg = resolve(v);
    else throw new Error(`unknown argument ${k} (expected --out DIR, --pkg DIR)`);
  }
  return o;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  try {
    const o = args(process.argv.slice(2));
    const { files, bytes, pages } = await buildSite(o);
    console.log(`site: ${pages.length} pages, ${files} files, ${(bytes / 1024).toFixed(1)} KiB in ${o.out}`);
  } catch (e) {
    console.error(`site: ${e instanceof SiteError ? e.message : (e?.stack ?? e)}`);
    process.exit(1);
  }
}
