// Writes the static playground: `node www/playground/build.mjs [--out DIR] [--pkg DIR]` (what `cargo xtask playground`
// runs; default out target/playground/, pkg pkg/). The folder holds the demo page (www/public/, its script replaced by
// the wiring, playground.js, with event-source.js), the Service Worker (sw.js), the demo backend (www/app.mjs and
// samples.mjs, under backend/), the sample documents (samples/) and the package files the page loads (pkg/: the
// browser entries of docauto, docauto/webhooks, docauto/realtime and docauto/emulator, and what they import). Every
// reference in it is relative, so any static file server serves it, from a sub-path as from the root.
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENTRIES = ["index.js", "webhooks/index.js", "realtime/index.js", "emulator/index.js"];
const MAIN_SCRIPT = '<script type="module" src="app/main.js"></script>';

function args(argv) {
  const o = { out: join(ROOT, "target", "playground"), pkg: join(ROOT, "pkg") };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (k === "--out" && v) o.out = resolve(v);
    else if (k === "--pkg" && v) o.pkg = resolve(v);
    else throw new Error(`unknown argument ${k} (expected --out DIR, --pkg DIR)`);
  }
  return o;
}

/** The relative files a module names: static and dynamic imports, re-exports, `new URL("./x", import.meta.url)`. */
export function references(source) {
  const out = new Set();
  const patterns = [
    /(?:^|[;\s])(?:import|export)\s[^;'"]*?from\s*["'](\.{1,2}\/[^"']+)["']/g,
    /(?:^|[;\s])import\s*["'](\.{1,2}\/[^"']+)["']/g,
    /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g,
    /new URL\(\s*["'](\.{1,2}\/[^"']+)["']\s*,\s*import\.meta\.url\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) out.add(m[1]);
  return [...out];
}

/**
 * Every file of pkg/ reachable from `entries` (the playground's by default; a missing one is an error: the page would
 * fail to load it).
 */
export function packageFiles(pkg, entries = ENTRIES) {
  const seen = new Set();
  const todo = entries.map((e) => join(pkg, e));
  while (todo.length) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    statSync(file); // throws when missing
    seen.add(file);
    if (!/\.m?js$/.test(file)) continue;
    for (const ref of references(readFileSync(file, "utf8"))) todo.push(resolve(dirname(file), ref));
  }
  for (const f of seen) if (relative(pkg, f).startsWith("..")) throw new Error(`${f} is outside ${pkg}`);
  return [...seen].sort();
}

export function copy(from, to) {
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}

function copyTree(from, to) {
  for (const name of readdirSync(from)) {
    const f = join(from, name);
    if (statSync(f).isDirectory()) copyTree(f, join(to, name));
    else copy(f, join(to, name));
  }
}

/** Writes the playground into `out` (emptied first); returns `{ files, bytes }`. */
export async function buildPlayground({ out, pkg }) {
  for (const e of ENTRIES) {
    statSync(join(pkg, e)); // a clear error before anything is removed
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const www = join(ROOT, "www");
  copyTree(join(www, "public"), out);
  const html = readFileSync(join(www, "public", "index.html"), "utf8");
  if (!html.includes(MAIN_SCRIPT)) throw new Error(`www/public/index.html no longer loads ${MAIN_SCRIPT}`);
  writeFileSync(
    join(out, "index.html"),
    html
      .replace(MAIN_SCRIPT, '<script type="module" src="playground.js"></script>')
      .replace(/<title>docauto demo/, "<title>docauto playground"),
  );
  copy(join(www, "playground", "playground.js"), join(out, "playground.js"));
  copy(join(www, "playground", "event-source.js"), join(out, "event-source.js"));
  copy(join(www, "playground", "sw.js"), join(out, "sw.js"));
  copy(join(www, "app.mjs"), join(out, "backend", "app.mjs"));
  copy(join(www, "samples.mjs"), join(out, "backend", "samples.mjs"));
  for (const f of packageFiles(pkg)) copy(f, join(out, "pkg", relative(pkg, f)));
  const { SAMPLES, sampleBytes } = await import(pathToFileURL(join(www, "samples.mjs")).href);
  for (const s of SAMPLES) {
    mkdirSync(join(out, "samples"), { recursive: true });
    writeFileSync(join(out, "samples", s.file), sampleBytes(s));
  }
  return sizeOf(out);
}

/** How many files a folder holds, all its subfolders included, and their bytes: `{ files, bytes }`. */
export function sizeOf(dir) {
  let files = 0;
  let bytes = 0;
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const f = join(d, name);
      const st = statSync(f);
      if (st.isDirectory()) walk(f);
      else {
        files++;
        bytes += st.size;
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const o = args(process.argv.slice(2));
  try {
    const { files, bytes } = await buildPlayground(o);
    console.log(`playground: ${files} files, ${(bytes / 1024).toFixed(1)} KiB in ${o.out}`);
  } catch (e) {
    console.error(`playground: ${e.message}`);
    process.exit(1);
  }
}
