// Fails when a type reachable from an export of the published declarations (pkg/index.d.ts) contains `any`.
// Walks every exported declaration and, through type references, every declaration it mentions.
import ts from "typescript";
import { fileURLToPath } from "node:url";
import { Checks, assert } from "../js/suite.mjs";
import { report } from "../js/common.mjs";

const entry = fileURLToPath(new URL("../../pkg/index.d.ts", import.meta.url));
const program = ts.createProgram([entry], {
  strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022, lib: ["lib.es2022.d.ts", "lib.dom.d.ts"], types: [],
});
const checker = program.getTypeChecker();
const t = new Checks(console.log);
const sf = program.getSourceFile(entry);
const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
const exportsOf = moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : [];

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

await t.run("pkg/index.d.ts exports declarations", () => {
  assert(exportsOf.length > 0, "no exports found in pkg/index.d.ts");
});
for (const sym of exportsOf) {
  const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
  await t.run(`no \`any\` reachable from export ${sym.name}`, () => {
    const seen = new Set();
    const hits = (target.declarations ?? []).flatMap((d) => (seen.add(d), anyIn(d, seen, sym.name)));
    assert(hits.length === 0, hits.join("; "));
  });
}
report("no any in .d.ts", t);
