// The links of the documentation: every relative link of a Markdown file the package ships resolves to a file the
// package ships (npm shows the README, and a link to a file left out of the tarball is dead there), with the
// heading its `#anchor` names; every relative link of the repository's other Markdown resolves in the repository.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { anchorsOf, linksOf } from "./blocks.mjs";

/** The files `npm pack` puts in the tarball of pkg/ (paths relative to the package root). */
export function shippedFiles(root) {
  const json = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: join(root, "pkg"), encoding: "utf8" });
  return new Set(JSON.parse(json)[0].files.map((f) => f.path));
}

/** Problems as `file:line text -> href: why`; empty when every link resolves. */
export async function checkLinks(root) {
  const problems = [];
  const shipped = shippedFiles(root);
  const check = (base, file, readFile, exists) => {
    const text = readFile(file);
    for (const [label, href, line] of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // absolute: https:, mailto:
      const [path, anchor] = href.split("#");
      const target = path === "" ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      const where = `${base}${file}:${line} [${label}](${href})`;
      if (target.startsWith("..") || !exists(target)) {
        problems.push(`${where}: ${target} is not ${base ? "in the package" : "in the repository"}`);
        continue;
      }
      if (anchor && target.endsWith(".md") && !anchorsOf(readFile(target)).has(anchor)) {
        problems.push(`${where}: ${target} has no heading #${anchor}`);
      }
    }
  };
  const pkg = join(root, "pkg");
  for (const file of [...shipped].filter((f) => f.endsWith(".md"))) {
    check("pkg/", file, (f) => readFileSync(join(pkg, f), "utf8"), (f) => shipped.has(f) || shipped.has(`${f}/`) || [...shipped].some((s) => s.startsWith(`${f}/`)));
  }
  // Tracked and new (not ignored) Markdown files alike: a page not yet committed is checked too.
  const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.md"], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter(Boolean);
  for (const file of tracked) {
    check("", file, (f) => readFileSync(join(root, f), "utf8"), (f) => existsSync(join(root, f)));
  }
  return problems.map((p) => (p.startsWith("pkg/") ? p : relative(".", p)));
}
