// Refuses, in one plain line, to install, start or test Tandem on a Node.js older than the root
// package.json's `engines.node` (">=X.Y"), instead of npm's engine warnings and odd failures later.
// Run by the root `preinstall`, `prestart` and `pretest` scripts. CommonJS with no recent syntax
// and no `node:` imports, since its whole point is to run on old versions of Node.js.
// `node scripts/check-node.cjs 20.18.0` checks that version instead of the running one (for tests).
// biome-ignore lint/style/useNodejsImportProtocol: `node:` imports fail on the old versions this refuses.
var fs = require("fs");
// biome-ignore lint/style/useNodejsImportProtocol: as above.
var path = require("path");

var engines = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8")).engines || {};
var wanted = /^>=\s*(\d+)(?:\.(\d+))?/.exec(engines.node || "");
if (!wanted) {
  console.error(`scripts/check-node.cjs: package.json engines.node should read ">=X.Y", not ${JSON.stringify(engines.node)}`);
  process.exit(1);
}
var needMajor = Number(wanted[1]);
var needMinor = Number(wanted[2] || 0);
var version = (process.argv[2] || process.versions.node).replace(/^v/, "");
var parts = version.split(".");
var major = Number(parts[0]);
var minor = Number(parts[1] || 0);
if (!(major > needMajor || (major === needMajor && minor >= needMinor))) {
  console.error(
    `Tandem needs Node.js ${needMajor}.${needMinor} or newer; this is ${version}. Install a newer Node.js (24 LTS recommended: https://nodejs.org), then run the command again.`,
  );
  process.exit(1);
}
