// api.md, the method reference of the package: made from the built package's declarations (each entry's
// `index.d.ts` and the wasm-bindgen declarations it re-exports, read with the TypeScript compiler API), and checked.
//
//   node tests/docs/api-reference.mjs --write   rewrites api.md (`cargo xtask types` runs it after building pkg/)
//   node tests/docs/api-reference.mjs --check   (the default) one check per method, then a RESULT line:
//     - api.md is what the declarations give now (else the first differing line is named);
//     - every method and getter of every exported class (and every exported function) appears in api.md, found by
//       its call shape (`client.runs.cancel(`, `verifier.verify(`, `createEmulator(`) read from the declarations;
//     - every method of the API client sends its documented route: each is called with the example arguments of
//       EXAMPLES below against a recording `fetch` that answers each request from a script, and the requests it
//       made (method and path) are compared with the route its doc comment states.
//
// The routes come from the doc comments of the client's methods (src/wasm/client/*.rs, which wasm-bindgen copies
// into the declarations as JSDoc), in one of two forms:
//   - one route: the comment opens with it, `POST /v1/agent-runs`: starts a run ...
//   - several (a helper): a paragraph `Routes: ...` names them in order, such as
//     Routes: `POST /v1/files`, then `PUT {uploadUrl}`, then `GET /v1/files/:id` until the file is ready.
//     `{name}` stands for an address an earlier answer gave (its JSON field or header of that name), and a
//     later route's `:name` may be such a field too (the id of the file registered).
// A path parameter `:name` is the method's parameter of that name. A client method with neither form fails the
// generator with a message naming it.
//
// DOCAUTO_PKG_DIR: the package folder to read and load (default pkg/).

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PKG = resolve(process.env.DOCAUTO_PKG_DIR ?? join(ROOT, "pkg"));
const API_MD = join(ROOT, "api.md");

// ---------------------------------------------------------------------------------------------------------------
// Reading the declarations
// ---------------------------------------------------------------------------------------------------------------

/** The package's entries (`exports` of pkg/package.json) and the declaration file of each. */
function packageEntries() {
  const manifest = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8"));
  return Object.entries(manifest.exports)
    .filter(([key, value]) => key.startsWith(".") && typeof value === "object" && value.default?.types)
    .map(([key, value]) => ({
      name: key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`,
      file: join(PKG, value.default.types),
    }));
}

const oneLine = (text) => text.replace(/\s+/g, " ").trim();

/** Reads the declarations of every entry: its exports as classes, functions, interfaces and type aliases. */
function readDeclarations() {
  const entries = packageEntries();
  const program = ts.createProgram(
    entries.map((e) => e.file),
    {
      noEmit: true,
      target: ts.ScriptTarget.ESNext,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      noLib: true, // only the package's own declarations are read
      types: [],
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();

  const resolveAlias = (symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  const docOf = (symbol) => {
    if (!symbol) return { text: "", tags: [] };
    const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
    const tags = symbol.getJsDocTags(checker).map((t) => ({ name: t.name, text: ts.displayPartsToString(t.text ?? []) }));
    return { text, tags };
  };
  const nodeText = (node) => oneLine(node.getText(node.getSourceFile()));
  const isStatic = (node) => (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Static) !== 0;
  const isPrivate = (node) => (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Private) !== 0;
  const param = (p) => ({
    name: p.name.getText(p.getSourceFile()),
    rest: p.dotDotDotToken !== undefined,
    optional: p.questionToken !== undefined || p.initializer !== undefined,
    type: p.type ? nodeText(p.type) : "unknown",
  });
  const signature = (node) => ({
    typeParameters: node.typeParameters ? node.typeParameters.map(nodeText) : [],
    params: node.parameters.map(param),
    returns: node.type ? nodeText(node.type) : "void",
  });

  /** Methods, properties and the constructor of a class (every declaration merged: class and interface). */
  function classOf(name, symbol) {
    const out = { kind: "class", name, doc: docOf(symbol), ctor: null, methods: [], props: [], releases: false };
    const seen = new Set();
    for (const decl of symbol.declarations ?? []) {
      if (!ts.isClassDeclaration(decl) && !ts.isInterfaceDeclaration(decl)) continue;
      for (const member of decl.members) {
        if (ts.isConstructorDeclaration(member)) {
          if (!isPrivate(member)) out.ctor = { ...signature(member), doc: docOfSignature(member) };
          continue;
        }
        if (!member.name || ts.isComputedPropertyName(member.name)) {
          // `[Symbol.dispose]()`: the same as `free()`.
          continue;
        }
        const memberName = member.name.getText(member.getSourceFile());
        if (isPrivate(member)) continue;
        if (memberName === "free") {
          out.releases = true;
          continue;
        }
        const key = `${isStatic(member) ? "static " : ""}${memberName}`;
        if (seen.has(key)) continue; // an overload: the first (the most specific) is shown
        seen.add(key);
        const symbolOfMember = checker.getSymbolAtLocation(member.name);
        if (ts.isMethodDeclaration(member) || ts.isMethodSignature(member)) {
          out.methods.push({
            name: memberName,
            static: isStatic(member),
            ...signature(member),
            doc: docOf(symbolOfMember),
          });
        } else if (
          ts.isPropertyDeclaration(member) ||
          ts.isPropertySignature(member) ||
          ts.isGetAccessorDeclaration(member)
        ) {
          out.props.push({
            name: memberName,
            static: isStatic(member),
            type: member.type ? nodeText(member.type) : "unknown",
            doc: docOf(symbolOfMember),
          });
        }
      }
    }
    return out;
  }

  /** The JSDoc of a signature (a constructor has no symbol of its own in every version of the compiler). */
  function docOfSignature(node) {
    const sig = checker.getSignatureFromDeclaration(node);
    if (!sig) return { text: "", tags: [] };
    return {
      text: ts.displayPartsToString(sig.getDocumentationComment(checker)).trim(),
      tags: sig.getJsDocTags().map((t) => ({ name: t.name, text: ts.displayPartsToString(t.text ?? []) })),
    };
  }

  /** The members of an object type (an interface with the ones it extends first, or a type literal), in order. */
  function membersOf(symbol, declaredIn = symbol.name) {
    const out = new Map();
    const add = (list) => list.forEach((m) => out.set(m.name, m));
    const fromTypeNode = (node, owner) => {
      if (ts.isTypeLiteralNode(node)) add(node.members.filter(ts.isPropertySignature).map((m) => member(m, owner)));
      else if (ts.isIntersectionTypeNode(node)) node.types.forEach((t) => fromTypeNode(t, owner));
      else if (ts.isParenthesizedTypeNode(node)) fromTypeNode(node.type, owner);
      else if (ts.isTypeReferenceNode(node)) {
        const target = checker.getSymbolAtLocation(node.typeName);
        if (target) add([...membersOf(resolveAlias(target)).values()]);
      }
    };
    const member = (m, owner) => ({
      name: m.name.getText(m.getSourceFile()),
      optional: m.questionToken !== undefined,
      type: m.type ? nodeText(m.type) : "unknown",
      doc: docOf(checker.getSymbolAtLocation(m.name)),
      declaredIn: owner,
    });
    for (const decl of symbol.declarations ?? []) {
      if (ts.isInterfaceDeclaration(decl)) {
        for (const clause of decl.heritageClauses ?? []) {
          for (const t of clause.types) {
            const base = checker.getSymbolAtLocation(t.expression);
            if (base) add([...membersOf(resolveAlias(base)).values()]);
          }
        }
        add(
          decl.members
            .filter((m) => ts.isPropertySignature(m) || ts.isMethodSignature(m))
            .map((m) => ({
              ...member(m, symbol.name),
              method: ts.isMethodSignature(m) ? signature(m) : null,
            })),
        );
      } else if (ts.isTypeAliasDeclaration(decl)) {
        fromTypeNode(decl.type, declaredIn);
      }
    }
    return out;
  }

  const result = [];
  for (const entry of entries) {
    const source = program.getSourceFile(entry.file);
    if (!source) throw new Error(`cannot read ${entry.file}`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    const exports = new Map();
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = resolveAlias(exported);
      const name = exported.name;
      const decls = symbol.declarations ?? [];
      if (decls.some(ts.isClassDeclaration)) exports.set(name, classOf(name, symbol));
      else if (decls.some(ts.isFunctionDeclaration)) {
        const fn = decls.find(ts.isFunctionDeclaration);
        exports.set(name, { kind: "function", name, ...signature(fn), doc: docOf(symbol) });
      } else if (decls.some(ts.isInterfaceDeclaration) || decls.some(ts.isTypeAliasDeclaration)) {
        const alias = decls.find(ts.isTypeAliasDeclaration);
        const bases = decls
          .filter(ts.isInterfaceDeclaration)
          .flatMap((d) => (d.heritageClauses ?? []).flatMap((c) => c.types.map((t) => nodeText(t.expression))));
        exports.set(name, {
          bases,
          kind: "type",
          name,
          doc: docOf(symbol),
          members: () => membersOf(symbol),
          aliasText: alias ? nodeText(alias.type) : null,
          unionMembers: alias && ts.isUnionTypeNode(alias.type) ? alias.type.types.map(nodeText) : null,
        });
      }
    }
    result.push({ name: entry.name, exports });
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// The routes stated by the client's doc comments
// ---------------------------------------------------------------------------------------------------------------

const ROUTE = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*|\{[A-Za-z]+\})$/;

/** The paragraphs of a doc comment, each on one line. */
const paragraphs = (text) => text.split(/\n\s*\n/).map(oneLine).filter(Boolean);

/** The code spans of a text, in order. */
const codeSpans = (text) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

/**
 * What a client method's doc comment says it calls: `{ routes, text, helper }`, `text` being the description without
 * the route. Throws, naming the method, when it states no route.
 */
function routesOf(label, doc, params) {
  const paras = paragraphs(doc.text);
  const first = paras[0] ?? "";
  let routes;
  let helper = false;
  let text;
  const opening = first.match(/^`([^`]+)`(?::\s*|\.\s*|\s*$)(.*)$/);
  const routesPara = paras.find((p) => p.startsWith("Routes: "));
  if (opening && ROUTE.test(opening[1])) {
    routes = [opening[1]];
    text = [opening[2], ...paras.slice(1)].filter(Boolean).join(" ");
  } else if (routesPara) {
    helper = true;
    routes = codeSpans(routesPara).filter((span) => ROUTE.test(span));
    if (routes.length === 0) throw new Error(`${label}: its "Routes:" paragraph names no route (\`METHOD /v1/...\`)`);
    text = paras.filter((p) => p !== routesPara).join(" ");
  } else {
    throw new Error(
      `${label}: its doc comment does not state its route. Open it with the route and what the method does ` +
        `(\`GET /v1/runs/:id\`: reads a run) or, for a method that calls several routes, add a paragraph ` +
        `"Routes: \`GET /v1/...\`, then ..." (the method's doc comment in src/wasm/client/)`,
    );
  }
  // A later route of a helper may name what an earlier answer gave (the id of a file it registered).
  const names = new Set(params.map((p) => p.name));
  for (const [, name] of routes[0].matchAll(/:([A-Za-z]+)/g)) {
    if (!names.has(name)) throw new Error(`${label}: route ${routes[0]} names :${name}, which is not a parameter`);
  }
  return { routes, helper, text, routesText: routesPara ?? null };
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------------------------

/** Who calls a class's instance methods in api.md (`verifier.verify(...)`); the client's resources are added. */
const RECEIVERS = {
  DocAuto: "client",
  WebhookVerifier: "verifier",
  RealtimeTranscriber: "transcriber",
  TestSigner: "signer",
  DedupeObject: "dedupeObject",
  InProcessEmulator: "emulator",
  RunningEmulator: "server",
};

/** The client's resources in the order a reader meets them; any other getter of `DocAuto` follows. */
const RESOURCE_ORDER = ["agents", "agentRuns", "runs", "files", "webhooks", "configs", "actions", "realtime"];

/** Methods in the order create, read, change, list, delete, then the rest by name. */
const METHOD_ORDER = ["generate", "create", "upload", "retrieve", "update", "list", "delete"];
const byVerb = (a, b) => {
  const rank = (m) => (METHOD_ORDER.includes(m.name) ? METHOD_ORDER.indexOf(m.name) : METHOD_ORDER.length);
  return rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
};

const sentence = (text) => {
  const t = oneLine(text);
  if (!t) return "";
  const capital = /^[a-z]/.test(t) ? t[0].toUpperCase() + t.slice(1) : t;
  return /[.!?)]$/.test(capital) ? capital : `${capital}.`;
};

/** A doc comment as one paragraph: rustdoc's `# Errors` heading becomes "Errors:", tags are dropped. */
const prose = (doc) =>
  paragraphs(doc.text.replace(/^# Errors\s*\n/m, "Errors: "))
    .map(sentence)
    .join(" ");

const deprecation = (doc) => {
  const tag = doc.tags.find((t) => t.name === "deprecated");
  return tag ? ` **Deprecated.** ${sentence(tag.text)}` : "";
};

const paramText = (p) => `${p.rest ? "..." : ""}${p.name}${p.optional ? "?" : ""}: ${p.type}`;
const callText = (target, sig) =>
  `${target}${sig.typeParameters.length ? `<${sig.typeParameters.join(", ")}>` : ""}(${sig.params.map(paramText).join(", ")})`;

/** A client method's result: `APIPromise<T>` is shown as `T` (the section's intro says so). */
const clientResult = (type) => {
  const m = type.match(/^APIPromise<(.*)>$/);
  return m ? m[1] : type;
};

/** Pipes and line breaks cannot stand in a table cell. */
const cell = (text) => text.replace(/\|/g, "\\|");

/** A table of options: name, type, (default,) what it does. `defaults`: read a `Default: ...` sentence out. */
function optionsTable(members, { defaults = false, owner = false } = {}) {
  const head = ["Option", "Type", ...(defaults ? ["Default"] : []), ...(owner ? ["Of"] : []), "What it does"];
  const lines = [`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`];
  for (const m of members) {
    let text = prose(m.doc);
    let fallback = "";
    if (defaults) {
      const found = text.match(/(?:^|\s)Default: (.+?)\.(?:\s|$)/);
      if (found) {
        fallback = found[1];
        text = oneLine(text.replace(found[0], " "));
      }
    }
    const row = [
      `\`${m.name}${m.optional ? "?" : ""}\``,
      `\`${m.type}\``,
      ...(defaults ? [fallback || "none"] : []),
      ...(owner ? [`\`${m.declaredIn}\``] : []),
      text,
    ];
    lines.push(`| ${row.map(cell).join(" | ")} |`);
  }
  return lines.join("\n");
}

/** Markdown of the whole reference, and the methods it lists. */
function render(entries) {
  const out = [];
  const line = (...l) => out.push(...l);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const handled = new Map(entries.map((e) => [e.name, new Set()]));
  const take = (entry, name) => {
    const item = byName.get(entry)?.exports.get(name);
    if (!item) throw new Error(`${entry} does not export ${name}`);
    handled.get(entry).add(name);
    return item;
  };
  const has = (entry, name) => byName.get(entry)?.exports.has(name) ?? false;

  /**
   * One list item per method: the call, then (on lines of their own: a trailing backslash is a line break) the route
   * or the routes it calls, and what it does.
   */
  const methodItem = (target, m, { client = false, label } = {}) => {
    const result = client ? clientResult(m.returns) : m.returns;
    const lines = [`- \`${callText(target, m)} -> ${result}\``];
    if (client) {
      const r = routesOf(label, m.doc, m.params);
      if (r.helper) lines.push(`${sentence(r.text)}${deprecation(m.doc)}`, r.routesText);
      else lines.push(`\`${r.routes[0]}\`${r.text ? `: ${r.text}` : ""}${deprecation(m.doc)}`);
    } else {
      const text = `${prose(m.doc)}${deprecation(m.doc)}`;
      if (text) lines.push(text);
    }
    line(lines.map((l, i) => (i === 0 ? l : `  ${l}`)).join("\\\n"));
  };
  const propItem = (target, p) => line(`- \`${target}: ${p.type}\`: ${prose(p.doc)}`);

  /** Every method and getter of a class, for `receiver`. */
  const classBody = (cls, receiver, opts = {}) => {
    const methods = [...cls.methods].sort(byVerb);
    for (const m of methods) methodItem(`${m.static ? cls.name : receiver}.${m.name}`, m, opts.method?.(m) ?? {});
    for (const p of cls.props) if (!opts.skipProp?.(p)) propItem(`${p.static ? cls.name : receiver}.${p.name}`, p);
  };

  const errorRow = (cls) => {
    const text = prose(cls.doc);
    const m = text.match(/^`([^`]+)`: (.*)$/);
    return `| \`${cls.name}\` | ${m ? `\`${m[1]}\`` : "none"} | ${cell(sentence(m ? m[2] : text))} |`;
  };

  const codes = (entry, name) => {
    const t = take(entry, name);
    return (t.unionMembers ?? [])
      .filter((u) => u.startsWith('"'))
      .map((u) => `\`${u.slice(1, -1)}\``)
      .join(", ");
  };

  const generic = (entryName) => {
    const rest = [...byName.get(entryName).exports.values()].filter(
      (x) => !handled.get(entryName).has(x.name) && (x.kind === "class" || x.kind === "function"),
    );
    if (rest.length === 0) return;
    line("", "### Other exports", "");
    for (const x of rest) {
      handled.get(entryName).add(x.name);
      if (x.kind === "function") methodItem(x.name, x);
      else {
        const receiver = RECEIVERS[x.name] ?? x.name[0].toLowerCase() + x.name.slice(1);
        if (x.ctor) methodItem(`new ${x.name}`, { ...x.ctor, returns: x.name });
        classBody(x, receiver);
      }
    }
  };

  line(
    "# API reference",
    "",
    "<!-- Generated from the package's TypeScript declarations by `cargo xtask types` (tests/docs/api-reference.mjs). " +
      "Do not edit: change the doc comments and regenerate. -->",
    "",
    "Every class, method and option of the package, entry by entry. A type named here is exported by the same entry " +
      "(`import type { AgentRun } from \"docauto\"`) and described in its declarations.",
    "",
    ...entries.map((e) => `- [\`${e.name}\`](#${e.name.replace(/[^a-z0-9-]/g, "")})`),
  );

  // --- docauto ------------------------------------------------------------------------------------------------
  const MAIN = entries[0].name;
  const client = take(MAIN, "DocAuto");
  const clientMethods = [];
  line("", `## \`${MAIN}\``, "", "```ts", `import { DocAuto } from "${MAIN}";`, "", "const client = new DocAuto({ apiKey, baseUrl });", "```");
  line("", "### `new DocAuto(options?)`", "", `\`${callText("new DocAuto", client.ctor)}\`: ${prose(client.ctor.doc)}`, "");
  const clientOptions = take(MAIN, "ClientOptions");
  line(optionsTable([...clientOptions.members().values()], { defaults: true }));
  const props = client.props.filter((p) => !/Resource$/.test(p.type));
  if (props.length) {
    line("");
    for (const p of props) propItem(`client.${p.name}`, p);
  }

  line(
    "",
    "### Request options",
    "",
    "Every method of the client takes an `options` object last. Each returns an `APIPromise<T>`: a `Promise<T>` " +
      "with `withResponse()`, which resolves to `{ data, response }` (status, headers, request id); below, " +
      "`-> T` names `T`.",
    "",
  );
  const optionTypes = ["RequestOptions", "WaitRequestOptions", "WaitOptions", "WaitForOptions"].filter((n) => has(MAIN, n));
  const requestOptions = new Map();
  for (const n of optionTypes) for (const m of take(MAIN, n).members().values()) requestOptions.set(m.name, m);
  line(optionsTable([...requestOptions.values()], { defaults: true, owner: true }), "");
  for (const n of optionTypes) {
    const type = take(MAIN, n);
    const own = [...type.members().values()].filter((m) => m.declaredIn === n).map((m) => `\`${m.name}\``);
    const made = type.bases.length ? ` (${[...type.bases.map((b) => `\`${b}\``), ...own].join(" and ")})` : "";
    line(`- \`${n}\`${made}: ${sentence(type.doc.text)}`);
  }

  const resourceGetters = client.props.filter((p) => /Resource$/.test(p.type));
  const receiverOf = new Map([["DocAuto", "client"]]);
  for (const g of resourceGetters) receiverOf.set(g.type, `client.${g.name}`);

  line("", "### Capabilities: `client.extract`, `client.parse`, ...", "");
  line(`${sentence(prose(client.doc))} Each capability is one call on the client itself; a 202 resolves to the run with its status.`, "");
  for (const m of [...client.methods].sort(byVerb)) {
    const label = `client.${m.name}`;
    clientMethods.push({ label, receiver: "client", cls: "DocAuto", method: m, routes: routesOf(label, m.doc, m.params) });
    methodItem(label, m, { client: true, label });
  }
  const ordered = [...resourceGetters].sort((a, b) => {
    const rank = (g) => (RESOURCE_ORDER.includes(g.name) ? RESOURCE_ORDER.indexOf(g.name) : RESOURCE_ORDER.length);
    return rank(a) - rank(b);
  });
  for (const getter of ordered) {
    const cls = take(MAIN, getter.type);
    line("", `### \`client.${getter.name}\``, "", sentence(prose(getter.doc)), "");
    for (const m of [...cls.methods].sort(byVerb)) {
      const label = `client.${getter.name}.${m.name}`;
      clientMethods.push({ label, receiver: `client.${getter.name}`, cls: cls.name, method: m, routes: routesOf(label, m.doc, m.params) });
      methodItem(label, m, { client: true, label });
    }
    for (const p of cls.props) propItem(`client.${getter.name}.${p.name}`, p);
  }
  const fns = [...byName.get(MAIN).exports.values()].filter((x) => x.kind === "function");
  if (fns.length) {
    line("", "### Functions", "");
    for (const f of fns) {
      handled.get(MAIN).add(f.name);
      methodItem(f.name, f);
    }
  }
  const errorClasses = [...byName.get(MAIN).exports.values()].filter((x) => x.kind === "class" && /Error$/.test(x.name));
  if (errorClasses.length) {
    line(
      "",
      "### Errors",
      "",
      "Every method rejects with a subclass of `APIError`, chosen by the answer's HTTP status; `code` is the " +
        "service's stable code (branch on it), `message` is for people.",
      "",
      "| Class | Status | When |",
      "| --- | --- | --- |",
    );
    for (const cls of errorClasses) {
      handled.get(MAIN).add(cls.name);
      line(errorRow(cls));
    }
    const base = errorClasses.find((c) => c.name === "APIError");
    if (base) {
      line("", "Members of every error:", "");
      for (const p of base.props) line(`- \`${p.name}: ${p.type}\`${p.doc.text ? `: ${prose(p.doc)}` : ""}`);
    }
  }
  generic(MAIN);

  // --- docauto/webhooks -----------------------------------------------------------------------------------------
  const WEBHOOKS = `${MAIN}/webhooks`;
  if (byName.has(WEBHOOKS)) {
    const verifier = take(WEBHOOKS, "WebhookVerifier");
    line(
      "",
      `## \`${WEBHOOKS}\``,
      "",
      "```ts",
      `import { WebhookVerifier } from "${WEBHOOKS}";`,
      "",
      "const verifier = new WebhookVerifier({ baseUrl });",
      "```",
    );
    line("", "### `new WebhookVerifier(options)`", "", `\`${callText("new WebhookVerifier", verifier.ctor)}\`: ${prose(verifier.ctor.doc)} ${prose(verifier.doc)}`, "");
    line(optionsTable([...take(WEBHOOKS, "WebhookVerifierOptions").members().values()]));
    line("", "### Methods", "");
    classBody(verifier, "verifier");
    if (has(WEBHOOKS, "WebhookHandleOptions")) {
      line("", "Options of `handle`:", "", optionsTable([...take(WEBHOOKS, "WebhookHandleOptions").members().values()]));
    }
    const factories = [...byName.get(WEBHOOKS).exports.values()].filter((x) => x.kind === "function" && /Store$/.test(x.name));
    if (factories.length) {
      line("", "### Stores", "", "Dedupe stores shared by every instance of a service: pass one as `dedupe`.", "");
      for (const f of factories) {
        handled.get(WEBHOOKS).add(f.name);
        methodItem(f.name, f);
      }
      if (has(WEBHOOKS, "DedupeObject")) {
        const object = take(WEBHOOKS, "DedupeObject");
        if (object.ctor) methodItem("new DedupeObject", { ...object.ctor, returns: "DedupeObject", doc: object.doc });
        classBody(object, "dedupeObject");
      }
      if (has(WEBHOOKS, "WebhookStore")) {
        const store = take(WEBHOOKS, "WebhookStore");
        line("", `What each returns, \`WebhookStore\`: ${sentence(store.doc.text)}`, "");
        for (const m of store.members().values()) {
          const sig = m.method ?? { typeParameters: [], params: [], returns: m.type };
          line(`- \`${callText(`store.${m.name}`, sig)} -> ${sig.returns}\`: ${prose(m.doc)}`);
        }
      }
    }
    if (has(WEBHOOKS, "WebhookVerificationError")) {
      const err = take(WEBHOOKS, "WebhookVerificationError");
      line("", "### Errors", "", `\`WebhookVerificationError\`: ${prose(err.doc)}`);
      if (has(WEBHOOKS, "WebhookErrorCode")) line(`Its \`code\` is one of ${codes(WEBHOOKS, "WebhookErrorCode")}.`);
    }
    generic(WEBHOOKS);
  }

  // --- docauto/realtime -----------------------------------------------------------------------------------------
  const REALTIME = `${MAIN}/realtime`;
  if (byName.has(REALTIME)) {
    const transcriber = take(REALTIME, "RealtimeTranscriber");
    line(
      "",
      `## \`${REALTIME}\``,
      "",
      "```ts",
      `import { RealtimeTranscriber } from "${REALTIME}";`,
      "",
      "const transcriber = new RealtimeTranscriber({ url });",
      "```",
    );
    line("", "### `new RealtimeTranscriber(options)`", "", `\`${callText("new RealtimeTranscriber", transcriber.ctor)}\`: ${prose(transcriber.ctor.doc)}`, "");
    line(optionsTable([...take(REALTIME, "RealtimeTranscriberOptions").members().values()]));
    line("", "### Methods", "");
    classBody(transcriber, "transcriber");
    if (has(REALTIME, "RealtimeStartOptions")) {
      line("", "Options of `start`:", "", optionsTable([...take(REALTIME, "RealtimeStartOptions").members().values()]));
    }
    if (has(REALTIME, "RealtimeEventMap")) {
      line("", "### Events", "", "Each a `CustomEvent` whose `detail` holds the data.", "", "| Event | `detail` | When |", "| --- | --- | --- |");
      for (const ev of take(REALTIME, "RealtimeEventMap").members().values()) {
        const detail = ev.type.match(/^CustomEvent<(.*)>$/)?.[1] ?? ev.type;
        line(`| \`${ev.name}\` | \`${cell(detail)}\` | ${cell(prose(ev.doc))} |`);
      }
    }
    if (has(REALTIME, "RealtimeError")) {
      const err = take(REALTIME, "RealtimeError");
      line("", "### Errors", "", `\`RealtimeError\`: ${prose(err.doc)}`);
      if (has(REALTIME, "RealtimeErrorCode")) line(`Its \`code\` is one of ${codes(REALTIME, "RealtimeErrorCode")}, or a code the service sent.`);
    }
    generic(REALTIME);
  }

  // --- docauto/testing ------------------------------------------------------------------------------------------
  const TESTING = `${MAIN}/testing`;
  if (byName.has(TESTING)) {
    const signer = take(TESTING, "TestSigner");
    line(
      "",
      `## \`${TESTING}\``,
      "",
      "```ts",
      `import { TestSigner } from "${TESTING}";`,
      "",
      "const signer = await TestSigner.generate();",
      "```",
      "",
      `\`TestSigner\`: ${prose(signer.doc) || "signs webhook deliveries as the service would, for tests."}`,
      "",
    );
    classBody(signer, "signer");
    if (has(TESTING, "TestSignerOptions")) {
      line("", "Options of `generate`:", "", optionsTable([...take(TESTING, "TestSignerOptions").members().values()]));
    }
    if (has(TESTING, "WebhookVerificationError")) {
      take(TESTING, "WebhookVerificationError");
      line("", `\`WebhookVerificationError\`: the error of a failed verification, with the codes of [\`${WEBHOOKS}\`](#${WEBHOOKS.replace(/[^a-z0-9-]/g, "")}).`);
    }
    generic(TESTING);
  }

  // --- docauto/emulator -----------------------------------------------------------------------------------------
  const EMULATOR = `${MAIN}/emulator`;
  if (byName.has(EMULATOR)) {
    line(
      "",
      `## \`${EMULATOR}\``,
      "",
      "```ts",
      `import { createEmulator } from "${EMULATOR}";`,
      "",
      "const emulator = createEmulator();",
      "const client = new DocAuto({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch });",
      "```",
      "",
    );
    for (const [fn, options, handle, receiver] of [
      ["createEmulator", "InProcessEmulatorOptions", "InProcessEmulator", "emulator"],
      ["startEmulator", "StartEmulatorOptions", "RunningEmulator", "server"],
    ]) {
      if (!has(EMULATOR, fn)) continue;
      const f = take(EMULATOR, fn);
      line(`### \`${fn}(options?)\``, "", `\`${callText(fn, f)} -> ${f.returns}\`: ${prose(f.doc)}`, "");
      if (has(EMULATOR, options)) line(optionsTable([...take(EMULATOR, options).members().values()], { owner: true }), "");
      if (has(EMULATOR, handle)) {
        const h = take(EMULATOR, handle);
        line(`\`${handle}\`: ${sentence(h.doc.text)}`, "");
        for (const m of h.members().values()) {
          if (m.method) line(`- \`${callText(`${receiver}.${m.name}`, m.method)} -> ${m.method.returns}\`: ${prose(m.doc)}`);
          else line(`- \`${receiver}.${m.name}: ${m.type}\`: ${prose(m.doc)}`);
        }
        line("");
      }
    }
    out.pop();
    generic(EMULATOR);
  }

  for (const e of entries) {
    if (![MAIN, WEBHOOKS, REALTIME, TESTING, EMULATOR].includes(e.name)) {
      line("", `## \`${e.name}\``);
      generic(e.name);
    }
  }
  const releasing = entries.flatMap((e) => [...e.exports.values()].filter((x) => x.kind === "class" && x.releases).map((x) => `\`${x.name}\``));
  if (releasing.length) {
    line(
      "",
      "---",
      "",
      `${releasing.join(", ")} also have \`free()\` and \`[Symbol.dispose]()\`: each releases the object's WebAssembly ` +
        "memory at once (`using` calls the second); without them it is released when the object is garbage collected.",
    );
  }
  return { text: `${out.join("\n")}\n`, clientMethods, receiverOf };
}

// ---------------------------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------------------------

/** What every exported class and function must show in api.md: its call shape, read from the declarations. */
function expectedMentions(entries, receiverOf) {
  const out = [];
  for (const entry of entries) {
    for (const x of entry.exports.values()) {
      if (x.kind === "function") out.push({ label: `${entry.name}: ${x.name}()`, text: `${x.name}(` });
      if (x.kind === "type" && RECEIVERS[x.name]) {
        for (const m of x.members().values()) {
          const text = `${RECEIVERS[x.name]}.${m.name}${m.method ? "(" : ":"}`;
          out.push({ label: `${entry.name}: ${x.name}.${m.name}`, text });
        }
      }
      if (x.kind !== "class") continue;
      const receiver = receiverOf.get(x.name) ?? RECEIVERS[x.name] ?? x.name[0].toLowerCase() + x.name.slice(1);
      const error = /Error$/.test(x.name);
      if (x.ctor && !error) out.push({ label: `${entry.name}: new ${x.name}()`, text: `new ${x.name}(` });
      for (const m of x.methods) {
        const call = `${m.static ? x.name : receiver}.${m.name}${m.typeParameters.length ? "<" : "("}`;
        out.push({ label: `${entry.name}: ${x.name}.${m.name}()`, text: call });
      }
      for (const p of x.props) {
        if (x.name === "DocAuto" && /Resource$/.test(p.type)) {
          out.push({ label: `${entry.name}: client.${p.name}`, text: `### \`client.${p.name}\`` });
        } else if (!error) {
          out.push({ label: `${entry.name}: ${x.name}.${p.name}`, text: `${p.static ? x.name : receiver}.${p.name}: ` });
        }
      }
      if (error) out.push({ label: `${entry.name}: ${x.name}`, text: `\`${x.name}\`` });
    }
  }
  return out;
}

const KEY = "sk_test_reference";
const BASE = "https://api.example.test";
const UPLOAD_URL = "https://uploads.example.test/u/file_1?sig=abc";
const OUTPUT_URL = "https://storage.example.test/o/report.pdf?sig=abc";

const json = (body, status = 200, headers = {}) => ({ status, body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
const RUN = json({ object: "extract_run", id: "exr_1", status: "processed" });
const AGENT_RUN = json({ object: "agent_run", id: "agr_1", status: "completed" });
const FILE = json({ object: "file", id: "file_1", status: "ready" });
const ENDPOINT = json({ object: "webhook_endpoint", id: "whe_1", url: "https://hooks.example.test/in", disabled: false, createdAt: "2026-01-01T00:00:00Z" });
const LIST = json({ object: "list", data: [] });
const DECISION = json({ object: "agent_run_approval", id: "apr_1", status: "approved", run: { object: "agent_run", id: "agr_1", status: "processing" } });
const NO_CONTENT = { status: 204, body: null, headers: {} };
const FILE_REF = { url: "https://files.example.test/invoice.pdf" };

/**
 * A valid call of every method of the client: its arguments, and the answers the recording `fetch` gives, in order
 * (the last one repeats). A method of the client that is not here fails its check.
 */
const EXAMPLES = {
  "client.extract": { args: [{ file: FILE_REF, schema: { type: "object", properties: { total: { type: "number" } } } }], answers: [RUN] },
  "client.extractBatch": { args: [{ action: "act_1", files: [FILE_REF] }], answers: [RUN] },
  "client.parse": { args: [{ file: FILE_REF }], answers: [RUN] },
  "client.redact": { args: [{ file: FILE_REF, categories: ["email"] }], answers: [RUN] },
  "client.fill": { args: [{ template: { id: "tpl_1" }, values: { name: "Ada" } }], answers: [RUN] },
  "client.sign": { args: [{ file: FILE_REF, signers: [{ name: "Ada", email: "ada@example.test" }] }], answers: [RUN] },
  "client.pipeline": { args: [{ files: [FILE_REF], steps: [{ parse: {} }] }], answers: [RUN] },
  "client.agents.list": { args: [], answers: [LIST] },
  "client.agents.retrieve": { args: ["agt_1"], answers: [json({ object: "agent", id: "agt_1", name: "Intake", version: 1 })] },
  "client.agentRuns.create": { args: [{ agent: "agt_1", files: [FILE_REF] }], answers: [AGENT_RUN] },
  "client.agentRuns.retrieve": { args: ["agr_1"], answers: [AGENT_RUN] },
  "client.agentRuns.approve": { args: ["agr_1", "apr_1", { note: "fine" }], answers: [DECISION] },
  "client.agentRuns.reject": { args: ["agr_1", "apr_1", { note: "wrong total" }], answers: [DECISION] },
  "client.agentRuns.completeTask": {
    args: ["agr_1", "tsk_1", { note: "signed" }],
    answers: [json({ object: "agent_run_task", id: "tsk_1", status: "completed", run: { object: "agent_run", id: "agr_1", status: "processing" } })],
  },
  "client.agentRuns.waitFor": { args: ["agr_1"], answers: [AGENT_RUN] },
  "client.runs.list": { args: [{ limit: 5 }], answers: [json({ object: "list", data: [], has_more: false, cursor: null })] },
  "client.runs.retrieve": { args: ["exr_1"], answers: [RUN] },
  "client.runs.cancel": { args: ["exr_1"], answers: [RUN] },
  "client.runs.delete": { args: ["exr_1"], answers: [NO_CONTENT] },
  "client.runs.keep": { args: ["exr_1", { spaceId: "spc_1" }], answers: [json({ object: "space", id: "spc_1" })] },
  "client.runs.outputUrl": { args: ["exr_1", "report.pdf"], answers: [{ status: 302, body: null, headers: { location: OUTPUT_URL } }] },
  "client.runs.downloadOutput": {
    args: ["exr_1", "report.pdf"],
    answers: [
      { status: 302, body: null, headers: { location: OUTPUT_URL } },
      { status: 200, body: "%PDF-1.7", headers: { "content-type": "application/pdf" } },
    ],
  },
  "client.runs.waitFor": { args: ["exr_1"], answers: [RUN] },
  "client.files.create": { args: [{ url: FILE_REF.url }], answers: [FILE] },
  "client.files.upload": {
    args: [{ name: "invoice.pdf", mimeType: "application/pdf", data: new Uint8Array([37, 80, 68, 70]) }],
    answers: [json({ object: "file", id: "file_1", status: "pending", uploadUrl: UPLOAD_URL }), { status: 200, body: "", headers: {} }, FILE],
  },
  "client.files.retrieve": { args: ["file_1"], answers: [FILE] },
  "client.files.waitUntilReady": { args: ["file_1"], answers: [FILE] },
  "client.webhooks.create": { args: [{ url: "https://hooks.example.test/in" }], answers: [ENDPOINT] },
  "client.webhooks.list": { args: [], answers: [LIST] },
  "client.webhooks.retrieve": { args: ["whe_1"], answers: [ENDPOINT] },
  "client.webhooks.update": { args: ["whe_1", { disabled: true }], answers: [ENDPOINT] },
  "client.webhooks.delete": { args: ["whe_1"], answers: [NO_CONTENT] },
  "client.webhooks.deliveries": { args: ["whe_1"], answers: [LIST] },
  "client.webhooks.jwks": { args: [], answers: [json({ keys: [] })] },
  "client.configs.create": {
    args: ["redact", { name: "emails", config: { categories: ["email"] } }],
    answers: [json({ object: "config", id: "cfg_1" })],
  },
  "client.actions.catalog": { args: [], answers: [json({ extract: {} })] },
  "client.actions.create": {
    args: [{ capability: "redact", name: "emails", config: { categories: ["email"] } }],
    answers: [json({ object: "config", id: "cfg_1" })],
  },
  "client.realtime.createSession": {
    args: [{}],
    answers: [json({ object: "realtime_session", id: "rts_1", url: "wss://rt.example.test/v1/realtime/socket?ticket=t", sampleRate: 16000 })],
  },
};

/**
 * Calls one client method against a recording `fetch`; resolves to the requests it made (method, URL) and the
 * values its answers handed out (JSON string fields and headers, by name, for `{name}` in a route).
 */
async function record(DocAuto, entry, example) {
  const requests = [];
  const given = new Map();
  let n = 0;
  const fetch = async (input, init = {}) => {
    requests.push({ method: (init.method ?? "GET").toUpperCase(), url: String(input) });
    const answer = example.answers[Math.min(n++, example.answers.length - 1)];
    for (const [k, v] of Object.entries(answer.headers)) given.set(k.toLowerCase(), v);
    if (answer.body && answer.headers["content-type"] === "application/json") {
      for (const [k, v] of Object.entries(JSON.parse(answer.body))) if (typeof v === "string") given.set(k.toLowerCase(), v);
    }
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  };
  const client = new DocAuto({ apiKey: KEY, baseUrl: BASE, fetch, maxRetries: 0, logLevel: "off" });
  const target = entry.receiver === "client" ? client : client[entry.receiver.slice("client.".length)];
  let timer;
  const outcome = await Promise.race([
    Promise.resolve(target[entry.method.name](...example.args)).then(
      () => ({ ok: true }),
      (error) => ({ ok: false, error }),
    ),
    new Promise((r) => {
      timer = setTimeout(() => r({ ok: false, error: new Error("no answer within 10 s") }), 10_000);
    }),
  ]);
  clearTimeout(timer);
  return { requests, given, outcome };
}

/** Whether a request is the route `METHOD /path?query`, with `args` for its `:name` parts. */
function matches(route, request, args, given) {
  const [, method, path] = route.match(ROUTE);
  if (request.method !== method) return false;
  const placeholder = path.match(/^\{([A-Za-z]+)\}$/);
  if (placeholder) return given.get(placeholder[1].toLowerCase()) === request.url;
  const url = new URL(request.url);
  const [routePath, query] = path.split("?");
  const expected = routePath.replace(/:([A-Za-z]+)/g, (_, name) =>
    encodeURIComponent(String(name in args ? args[name] : given.get(name.toLowerCase()))),
  );
  if (url.origin !== BASE || url.pathname !== expected) return false;
  for (const [k, v] of new URLSearchParams(query ?? "")) if (url.searchParams.get(k) !== v) return false;
  return true;
}

async function checkRoutes(clientMethods, t) {
  let DocAuto;
  try {
    ({ DocAuto } = await import(pathToFileURL(join(PKG, "node.js")).href));
  } catch (e) {
    return t.fail(`the client loads from ${PKG}`, e.message);
  }
  for (const entry of clientMethods) {
    const name = `${entry.label} sends ${entry.routes.routes.join(", then ")}`;
    const example = EXAMPLES[entry.label];
    if (!example) {
      t.fail(name, `no example arguments: add "${entry.label}" to EXAMPLES in tests/docs/api-reference.mjs`);
      continue;
    }
    const { requests, given, outcome } = await record(DocAuto, entry, example);
    const args = Object.fromEntries(entry.method.params.map((p, i) => [p.name, example.args[i]]));
    const made = requests.filter((r, i) => i === 0 || r.method !== requests[i - 1].method || r.url !== requests[i - 1].url);
    const shown = made.map((r) => `${r.method} ${r.url}`).join(", then ") || "no request";
    if (!outcome.ok) {
      t.fail(name, `the call failed (${outcome.error?.name}: ${outcome.error?.message}); requests: ${shown}`);
      continue;
    }
    const routes = entry.routes.routes;
    const ok = entry.routes.helper
      ? made.length === routes.length && routes.every((route, i) => matches(route, made[i], args, given))
      : made.length >= 1 && matches(routes[0], made[0], args, given);
    if (ok) t.pass(name);
    else t.fail(name, `its doc comment says ${routes.join(", then ")}; it sent ${shown}`);
  }
}

function firstDifference(actual, expected) {
  const a = actual.split("\n");
  const b = expected.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return `api.md:${i + 1} is\n    ${a[i] === undefined ? "(end of file)" : a[i]}\n  the declarations give\n    ${b[i] === undefined ? "(end of file)" : b[i]}`;
    }
  }
  return null;
}

async function main() {
  const mode = process.argv.includes("--write") ? "write" : "check";
  let entries;
  let rendered;
  try {
    entries = readDeclarations();
    rendered = render(entries);
  } catch (e) {
    console.error(`api.md cannot be generated: ${e.message}`);
    if (mode === "check") console.log(`RESULT ${JSON.stringify({ suite: "api.md", passed: 0, failed: 1 })}`);
    process.exit(1);
  }
  if (mode === "write") {
    writeFileSync(API_MD, rendered.text);
    console.log(`wrote api.md (${rendered.text.split("\n").length - 1} lines, ${rendered.clientMethods.length} client methods)`);
    return;
  }

  const t = {
    passed: 0,
    failed: 0,
    pass(name) {
      this.passed++;
      console.log(`ok   ${name}`);
    },
    fail(name, why) {
      this.failed++;
      console.log(`FAIL ${name}: ${why}`);
    },
  };
  let current = "";
  try {
    current = readFileSync(API_MD, "utf8");
  } catch {
    current = "";
  }
  const diff = firstDifference(current, rendered.text);
  if (diff) t.fail("api.md is current", `${diff}\n  run \`cargo xtask types\` (or node tests/docs/api-reference.mjs --write)`);
  else t.pass("api.md is current");
  for (const m of expectedMentions(entries, rendered.receiverOf)) {
    if (current.includes(m.text)) t.pass(`api.md lists ${m.label}`);
    else t.fail(`api.md lists ${m.label}`, `no \`${m.text}\` in api.md`);
  }
  await checkRoutes(rendered.clientMethods, t);
  console.log(`RESULT ${JSON.stringify({ suite: "api.md", passed: t.passed, failed: t.failed })}`);
  process.exit(t.failed === 0 ? 0 : 1);
}

await main();
