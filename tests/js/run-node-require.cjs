// Node, CommonJS require: the "node" > "require" condition (index.cjs, which requires the ES module entry) of the
// root entry and of `docauto/webhooks`.
const path = require("node:path");

// require(esm) moved between Node lines (behind a flag, then on with an ExperimentalWarning, then silent): the
// entries must load through `require` without any warning on every line `cargo xtask test` runs. (Node 22.12.0, not
// a pinned line, warns here, where the package is pkg/ through a link; installed under node_modules it does not:
// Node warns only for a require from outside node_modules. Tried by hand on 20.19.0 and 22.12.0.)
const warnings = [];
process.on("warning", (w) => warnings.push(`${w.name}: ${w.message}`));

async function main() {
  const docauto = require("docauto");
  const webhooks = require("docauto/webhooks");
  const { loadFixtures, report, resolvedCheck } = await import("./common.mjs");
  const { runSuite, Checks, assert } = await import("./suite.mjs");
  const { runClientEntry } = await import("./client-entry.mjs");
  const resolved = (s) => require.resolve(s).split(path.sep).join("/");
  report("node-require resolution", resolvedCheck(resolved("docauto"), "index.cjs"));
  report("node-require resolution (webhooks)", resolvedCheck(resolved("docauto/webhooks"), "webhooks/index.cjs"));
  const t = new Checks(console.log);
  await t.run(`require of both entries printed no warning (${process.version})`, async () => {
    await new Promise((r) => setTimeout(r, 10)); // a warning is emitted on a later tick
    assert(warnings.length === 0, warnings.join("; "));
  });
  await t.run("require and import share one module instance (each entry)", async () => {
    assert((await import("docauto")).DocAuto === docauto.DocAuto, "two different DocAuto classes");
    assert((await import("docauto/webhooks")).WebhookVerifier === webhooks.WebhookVerifier, "two different WebhookVerifier classes");
  });
  report("node-require instance", t);
  report("node-require client entry", await runClientEntry(docauto));
  report("node-require docauto/webhooks", await runSuite(webhooks, loadFixtures()));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
