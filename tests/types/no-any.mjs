// Fails when a type reachable from an export of the published declarations contains `any`, in every entry of the
// package (pkg/index.d.ts, and the index.d.ts of each entry folder: webhooks, realtime, ...). Walks every exported
// declaration and, through type references, every declaration it mentions.
import ts from "typescript";
import { fileURLToPath } from "node:url";
import { existsSync, readdirSync } from "node:fs";
import { Checks, assert } from "../js/suite.mjs";
import { report } from "../js/common.mjs";

const pkg = fileURLToPath(new URL("../../pkg/", import.meta.url));
const entries = [
  "index.d.ts",
  ...readdirSync(pkg, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(`${pkg}${d.name}/index.d.ts`))
    .map((d) => `${d.name}/index.d.ts`),
];
const program = ts.createProgram(entries.map((e) => pkg + e), {
  strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022, lib: ["lib.es2022.d.ts", "lib.dom.d.ts"], types: [],
});
const checker = program.getTypeChecker();
const t = new Checks(console.log);

/** Our own declaration files only (not lib.dom.d.ts). */
const ours = (node) => node.getSourceFile().fileName.includes("/pkg/");

function anyIn(decl, seen, path) {
  const found = [];
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) {
      const { line } = node.getSourceFile().getLineAndCharacterOfPosition(node.getStart());
      found.push(`${path} (${node.getSourceFile().fileName.split("/pkg/")[1]}:${line + 1}: ${node.parent.getText().slice(0, 80)})`);
    }
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
      const target = ts.isTypeReferenceNode(node) ? node.typeName : node.expression;
      // An unresolvable name is typed `any` by the compiler: as bad as writing `any`.
      if (checker.getTypeFromTypeNode(node).flags & ts.TypeFlags.Any) {
        const { line } = node.getSourceFile().getLineAndCharacterOfPosition(node.getStart());
        found.push(`${path} (unresolved ${target.getText()} at ${node.getSourceFile().fileName.split("/pkg/")[1]}:${line + 1})`);
      }
      let sym = checker.getSymbolAtLocation(target);
      if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
      for (const d of sym?.declarations ?? []) {
        if (ours(d) && !seen.has(d)) {
          seen.add(d);
          found.push(...anyIn(d, seen, `${path} -> ${sym.name}`));
        }
      }
    }
    // Private members are not part of the public surface.
    if ((ts.isPropertyDeclaration(node) || ts.isMethodDeclaration(node)) &&
        node.modifiers?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword)) return;
    ts.forEachChild(node, visit);
  };
  visit(decl);
  return found;
}

for (const entry of entries) {
  const sf = program.getSourceFile(pkg + entry);
  const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
  const exportsOf = moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : [];
  const label = entry === "index.d.ts" ? "" : `${entry.split("/")[0]}: `;
  await t.run(`pkg/${entry} exports declarations`, () => {
    assert(exportsOf.length > 0, `no exports found in pkg/${entry}`);
  });
  for (const sym of exportsOf) {
    const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
    await t.run(`${label}no \`any\` reachable from export ${sym.name}`, () => {
      const seen = new Set();
      const hits = (target.declarations ?? []).flatMap((d) => (seen.add(d), anyIn(d, seen, sym.name)));
      assert(hits.length === 0, hits.join("; "));
    });
  }
}
report("no any in .d.ts", t);
