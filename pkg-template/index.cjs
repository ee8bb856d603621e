// Node `require()` of this entry: loads the ES module entry (require(esm), Node >= 20.19 / 22.12), so `require` and
// `import` share one wasm instance.
module.exports = require("./node.js");
