// Node, CommonJS require: the "node" > "require" condition (index.cjs, which requires the ES module entry).
const path = require("node:path");

async function main() {
  const docauto = require("docauto");
  const { loadFixtures, report, resolvedCheck } = await import("./common.mjs");
  const { runSuite, Checks, assert } = await import("./suite.mjs");
  report("node-require resolution", resolvedCheck(require.resolve("docauto").split(path.sep).join("/"), "index.cjs"));
  const t = new Checks(console.log);
  await t.run("require and import share one module instance", async () => {
    const esm = await import("docauto");
    assert(esm.WebhookVerifier === docauto.WebhookVerifier, "two different WebhookVerifier classes");
  });
  report("node-require instance", t);
  report("node-require", await runSuite(docauto, loadFixtures()));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
