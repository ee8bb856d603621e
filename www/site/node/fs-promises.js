// `node:fs/promises` for the site's examples: `readFile` reads the sample documents the examples name
// (contract.txt, invoice.pdf, note.md) from the site's samples/ folder, whatever folder the path names; a file an
// example wrote with `writeFile` is read back from memory. Any other file is ENOENT, as on a disk without it.
import { realFetch, siteRoot } from "../router.js";

const written = new Map();
const nameOf = (path) => String(path instanceof URL ? path.pathname : path).split(/[\\/]/).pop();
const notFound = (path) =>
  Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: "ENOENT", errno: -2, syscall: "open", path: String(path) });

export async function readFile(path, options) {
  const name = nameOf(path);
  let bytes = written.get(name);
  if (!bytes) {
    const answer = await realFetch(new URL(`samples/${encodeURIComponent(name)}`, siteRoot));
    if (!answer.ok) throw notFound(path);
    bytes = new Uint8Array(await answer.arrayBuffer());
  }
  const encoding = typeof options === "string" ? options : options?.encoding;
  if (encoding) return new TextDecoder().decode(bytes);
  return globalThis.Buffer?.from ? globalThis.Buffer.from(bytes) : bytes;
}

export async function writeFile(path, data) {
  written.set(nameOf(path), typeof data === "string" ? new TextEncoder().encode(data) : new Uint8Array(data.buffer ?? data, data.byteOffset ?? 0, data.byteLength));
}

export default { readFile, writeFile };
