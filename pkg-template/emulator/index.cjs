// Node `require("docauto/emulator")`: loads the ES module entry (require(esm), Node >= 20.19 / 22.12).
module.exports = require("./node.js");
