// Node require() entry: Node ≥ 20.19 can require the synchronous ES module entry.
module.exports = require("./node.js");
