// The site's build (www/site/build.mjs) on small Markdown trees of its own: a link to a file that does not exist, and
// one to a heading that does not exist, each fail the build with the file and line of the link (and the site
// folder is left as it was); in a good tree, links between Markdown files become links between pages with the
// heading's anchor, each heading has GitHub's anchor as its id, and each code block says where it runs.
//
// Run: `node tests/js/site/build-checks.mjs` (the full build case needs pkg/ from `cargo xtask build`).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSite, pageOf, renderPages } from "../../../www/site/build.mjs";
import { report } from "../common.mjs";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const tally = { passed: 0, failed: 0 };
const log = (ok, line) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${line}`);
  if (ok) tally.passed++;
  else tally.failed++;
};

const dirs = [];
function tree(files) {
  const dir = mkdtempSync(join(tmpdir(), "docauto-site-md-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function failure(fn) {
  try {
    fn();
    return null;
  } catch (e) {
    return e.message;
  }
}

const GUIDE = "# A guide\n\n## Handling each event once\n\nText.\n\n## Limits and hostile input\n\nMore.\n";

// 1. A link to a file that is not there.
{
  const root = tree({
    "README.md": "# Home\n\nSee [the guide](docs/guide.md).\n\nAnd [a page that is not there](docs/webhoks.md#stores).\n",
    "docs/guide.md": GUIDE,
  });
  const message = failure(() => renderPages(root));
  log(
    message !== null && message.includes("README.md:5") && message.includes("docs/webhoks.md"),
    `a link to a missing file fails the build with its file and line (${message ?? "the build passed"})`,
  );
}

// 2. A link to a heading that is not there, from a guide to another.
{
  const root = tree({
    "README.md": "# Home\n\n[Guide](docs/guide.md)\n",
    "docs/guide.md": GUIDE,
    "docs/other.md": "# Other\n\nBack to [the guide](guide.md#handling-each-event-once).\n\nSee [limits](guide.md#limits-and-hostile-inputs).\n",
  });
  const message = failure(() => renderPages(root));
  log(
    message !== null && message.includes("docs/other.md:5") && message.includes("#limits-and-hostile-inputs") && !message.includes("other.md:3"),
    `a link to a missing heading fails the build with its file and line (${message ?? "the build passed"})`,
  );
}

// 3. A good tree: links rewritten to pages and anchors, heading ids, where each block runs.
{
  const root = tree({
    "README.md": [
      "# Home",
      "",
      "[Guides](docs/README.md) · [once](docs/guide.md#handling-each-event-once) · [changes](CHANGELOG.md)",
      "",
      "<!-- run: node expect=\"ok\" -->",
      "```ts",
      'console.log("ok");',
      "```",
      "",
      "<!-- run: deno -->",
      "```ts",
      'console.log("deno");',
      "```",
      "",
    ].join("\n"),
    "docs/README.md": "# Guides\n\n[The guide](guide.md) and [home](../README.md#home).\n",
    "docs/guide.md": GUIDE,
    "CHANGELOG.md": "# Changelog\n\n## 0.2.0\n",
  });
  let pages;
  const message = failure(() => ({ pages } = renderPages(root)));
  const home = pages?.get("README.md")?.html ?? "";
  const guides = pages?.get("docs/README.md")?.html ?? "";
  const guide = pages?.get("docs/guide.md")?.html ?? "";
  log(message === null, `a tree whose links resolve builds${message ? `: ${message}` : ""}`);
  log(
    home.includes('href="docs/index.html"') && home.includes('href="docs/guide.html#handling-each-event-once"') && home.includes('href="CHANGELOG.html"') && guides.includes('href="../index.html#home"'),
    "links between Markdown files become relative links between pages, with their anchors",
  );
  log(guide.includes('id="handling-each-event-once"') && guide.includes('id="limits-and-hostile-input"'), "each heading has GitHub's anchor as its id");
  log(
    /data-line="6"[^>]*data-run="page"/.test(home) && /Runs in Deno: <code>deno run -A example.ts<\/code>\. Not in this page: a page has no Deno\./.test(home) && !home.includes("<!-- run:"),
    "a Node script gets a Run button, a Deno script says where it runs, and the directives are not shown",
  );
  log(pageOf("docs/README.md") === "docs/index.html" && pageOf("api.md") === "api.html", "README.md is its folder's index.html, X.md is X.html");
}

// 4. The whole build: a broken link stops it before it touches the output folder.
if (existsSync(join(ROOT, "pkg", "index.js"))) {
  const root = tree({ "README.md": "# Home\n\n[nowhere](docs/nowhere.md)\n" });
  const out = join(root, "site");
  mkdirSync(out);
  writeFileSync(join(out, "index.html"), "the previous site");
  let message = null;
  try {
    await buildSite({ root, out, playground: false });
  } catch (e) {
    message = e.message;
  }
  log(
    message?.includes("README.md:3") && readFileSync(join(out, "index.html"), "utf8") === "the previous site",
    `buildSite rejects on a broken link and leaves the output folder as it was (${message ?? "it built"})`,
  );
} else {
  log(false, "pkg/ is not built: run cargo xtask build");
}

for (const d of dirs) rmSync(d, { recursive: true, force: true });
report("site build", tally);
console.log(`${tally.passed} passed, ${tally.failed} failed`);
process.exit(tally.failed === 0 ? 0 : 1);
