#!/usr/bin/env node
// Runs the server's build in dist/ (`npm install` makes it; see scripts/build.mjs). When a source
// changed since that build (a `git pull` without `npm install`, an edit), it builds again first,
// in about a second, so what runs is always the code in the checkout.
import { enableCompileCache } from "node:module";
import { ensureBuilt } from "../scripts/build.mjs";

// V8's compiled code, cached on disk by Node (in the temp folder): a start after the first compiles
// little of the server and its packages again.
enableCompileCache();

try {
  await ensureBuilt();
} catch (error) {
  process.stderr.write(`tandem-server: could not build the server (${error.message}); running the last build\n`);
}
const { main } = await import("../dist/main.js");
process.exitCode = await main(process.argv.slice(2));
