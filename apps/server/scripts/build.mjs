// Builds the server once into dist/, so starting it, its CLI and the tests that spawn it run plain
// JavaScript instead of transpiling the TypeScript sources on every start. Plain JavaScript itself
// (no TypeScript loader needed) because `npm install` runs it (the root `prepare` script) and
// bin/tandem-server.mjs runs it when the sources changed since the last build.
//
//   node apps/server/scripts/build.mjs           build if any source changed since the last build
//   node apps/server/scripts/build.mjs --force   build anyway
//
// What it writes (dist/ is not in git):
//   main.js              the CLI (`serve` and every other command), ESM for Node 22+
//   regex-worker.js      the grep worker thread
//   chunk-*.js           modules loaded only when first needed (split out of main.js, so a command
//                        or request that needs none of them never loads or parses them)
//   guest-rich-text.js   the guest page's Markdown renderer, for the browser
//   build.json           the inputs and outputs of the build, to tell when it is stale
// Packages stay external (node_modules is not bundled; the native sqlite3 could not be); only the
// workspace's own TypeScript packages (@tandem/*) are bundled in.
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SERVER_DIR = fileURLToPath(new URL("..", import.meta.url));
const DIST_DIR = path.join(SERVER_DIR, "dist");
const MANIFEST = path.join(DIST_DIR, "build.json");
const THIS_SCRIPT = fileURLToPath(import.meta.url);

/**
 * The guest page's copy of `@tandem/core/rich-text` (the very Markdown reader and renderer the
 * desktop's Agent and Inbox use), one browser script defining `TandemRichText.appendMarkdown`.
 * Shared with src/people/share/guest-rich-text.ts, which bundles it the same way when the server runs
 * from its sources (development, in-process tests).
 */
export const guestRichTextOptions = {
  absWorkingDir: SERVER_DIR,
  stdin: {
    contents: 'export { appendMarkdown } from "@tandem/core/rich-text";',
    resolveDir: path.join(SERVER_DIR, "src", "people", "share"),
    loader: "ts",
  },
  bundle: true,
  format: "iife",
  globalName: "TandemRichText",
  platform: "browser",
  target: "es2020",
  minify: true,
  legalComments: "none",
  logLevel: "silent",
};

/** The browser script from an esbuild result; it goes inside a <script> element, which nothing in it may close. */
export function guestRichTextCode(result) {
  const code = result.outputFiles?.[0]?.text ?? "";
  if (code === "" || /<\/script/i.test(code)) throw new Error("the guest page's rich-text script could not be built");
  return code;
}

/**
 * The packages left external (loaded from node_modules at run time); every other package is bundled
 * in, so a start reads a few files instead of the thousands its packages are made of.
 */
const EXTERNAL_PACKAGES = new Set([
  "sqlite3", // native
  "pg-native", // pg's optional native binding
  "bufferutil", // ws's optional native helpers
  "utf-8-validate",
  "esbuild", // runs its own binary, found by path
  "happy-dom", // reads its own files at run time
  "oidc-provider",
]);

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const REPO_DIR = path.join(SERVER_DIR, "..", "..");
let copiesByVersion;

/**
 * The folder (relative to the repository) of each package installed more than once at the same
 * version, mapped to the one copy the build uses: npm nests identical copies under the packages that
 * depend on them (mime-types and mime-db four times, under express, accepts, send and type-is), and
 * each copy bundled would be evaluated again at start (mime-types builds its tables on load).
 * From package-lock.json, so the choice is the same on every build: the first path in sort order.
 */
function duplicateCopies() {
  if (copiesByVersion) return copiesByVersion;
  copiesByVersion = new Map();
  const lock = JSON.parse(readFileSync(path.join(REPO_DIR, "package-lock.json"), "utf8"));
  const byKey = new Map();
  for (const [where, entry] of Object.entries(lock.packages ?? {})) {
    if (!where.includes("node_modules/") || entry.link || !entry.version) continue;
    const name = where.slice(where.lastIndexOf("node_modules/") + "node_modules/".length);
    const key = `${name}@${entry.version}`;
    byKey.set(key, [...(byKey.get(key) ?? []), where]);
  }
  for (const copies of byKey.values()) {
    if (copies.length < 2) continue;
    const [chosen] = copies.sort();
    for (const copy of copies) if (copy !== chosen) copiesByVersion.set(copy, chosen);
  }
  return copiesByVersion;
}

/** Resolves a bundled package's import as usual, but to the chosen copy when npm installed identical copies. */
async function resolveOneCopy(build, args) {
  const resolved = await build.resolve(args.path, {
    kind: args.kind,
    importer: args.importer,
    resolveDir: args.resolveDir,
    pluginData: "inner",
  });
  if (resolved.errors.length > 0 || resolved.external) return undefined;
  const relative = path.relative(REPO_DIR, resolved.path).split(path.sep).join("/");
  const marker = `node_modules/${packageName(args.path)}/`;
  const at = relative.lastIndexOf(marker);
  if (at < 0) return undefined;
  const chosen = duplicateCopies().get(relative.slice(0, at + marker.length - 1));
  if (!chosen) return undefined;
  return { path: path.join(REPO_DIR, chosen, relative.slice(at + marker.length)) };
}

/**
 * Leaves bare imports (packages) external. One that resolves differently from dist/ than from the
 * file importing it (a version npm nested under packages/core/node_modules) is imported by its
 * path relative to dist/, so the built server loads exactly the copy the sources do.
 */
const packagesExternal = {
  name: "packages-external",
  setup(build) {
    // The sources' way to the guest page's script (src/people/share/guest-rich-text.ts), never taken by the build.
    build.onResolve({ filter: /\/scripts\/build\.mjs$/ }, () => ({ path: "../scripts/build.mjs", external: true }));
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith("@tandem/") || args.pluginData === "inner") return undefined;
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      if (!EXTERNAL_PACKAGES.has(packageName(args.path))) return resolveOneCopy(build, args);
      const fromImporter = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: "inner" });
      if (fromImporter.errors.length > 0 || fromImporter.external) return { path: args.path, external: true };
      const fromDist = await build.resolve(args.path, { kind: args.kind, resolveDir: DIST_DIR, pluginData: "inner" });
      if (fromDist.errors.length === 0 && fromDist.path === fromImporter.path) return { path: args.path, external: true };
      const relative = path.relative(DIST_DIR, fromImporter.path).split(path.sep).join("/");
      return { path: relative.startsWith(".") ? relative : `./${relative}`, external: true };
    });
  },
};

/**
 * Tells esbuild that @tandem/core's modules do nothing when imported but define things (true of
 * them all), so a module of it that the server does not use is left out with the packages it
 * imports: the CLI's `keys list` needs the scope names, not the editor schema and its HTML parser.
 */
const CORE_SOURCES = path.join(SERVER_DIR, "..", "..", "packages", "core", "src") + path.sep;
const coreWithoutSideEffects = {
  name: "core-without-side-effects",
  setup(build) {
    build.onResolve({ filter: /^(@tandem\/core|\.)/ }, async (args) => {
      if (args.pluginData === "inner") return undefined;
      if (!args.path.startsWith("@tandem/core") && !args.importer.startsWith(CORE_SOURCES)) return undefined;
      const { path: resolved, errors } = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "inner",
      });
      return errors.length > 0 ? undefined : { path: resolved, sideEffects: false };
    });
  },
};

/** Whether dist/ holds a build of the current sources: every input of the last build is still there and none is newer. */
export function isBuildFresh() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, "utf8"));
  } catch {
    return false;
  }
  try {
    for (const file of manifest.outputs) statSync(path.join(DIST_DIR, file));
    for (const file of manifest.inputs) {
      if (statSync(path.join(SERVER_DIR, file)).mtimeMs > manifest.builtAtMs) return false;
    }
  } catch {
    return false; // an input or output is gone
  }
  return true;
}

/** Builds dist/ unless it is fresh (or `force`); answers whether it built. */
export async function ensureBuilt({ force = false } = {}) {
  if (!force && isBuildFresh()) return false;
  await build();
  return true;
}

async function build() {
  const esbuild = await import("esbuild");
  // Taken before reading any source: a source saved during the build makes the next check rebuild.
  const builtAtMs = Date.now();
  const [server, guest] = await Promise.all([
    esbuild.build({
      absWorkingDir: SERVER_DIR,
      entryPoints: { main: "src/cli/main.ts", "regex-worker": "src/workspace/grep/regex-worker.ts" },
      outdir: DIST_DIR,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node22",
      plugins: [packagesExternal, coreWithoutSideEffects],
      sourcemap: "linked",
      // The bundled CommonJS packages' `require` of Node's modules, which ESM has no `require` for.
      banner: {
        js: 'import { createRequire as __tandemCreateRequire } from "node:module"; const require = __tandemCreateRequire(import.meta.url);',
      },
      write: false,
      metafile: true,
      logLevel: "warning",
    }),
    esbuild.build({ ...guestRichTextOptions, write: false, metafile: true }),
  ]);
  const files = [
    ...server.outputFiles.map((file) => ({ name: path.relative(DIST_DIR, file.path), contents: file.contents })),
    { name: "guest-rich-text.js", contents: guestRichTextCode(guest) },
  ];
  // The lockfile too: a package moved by npm (one nested under packages/core/node_modules, imported by path) means a new build.
  const inputs = new Set([path.relative(SERVER_DIR, THIS_SCRIPT), path.join("..", "..", "package-lock.json")]);
  for (const input of [...Object.keys(server.metafile.inputs), ...Object.keys(guest.metafile.inputs)]) {
    // esbuild names inputs relative to its working directory; packages' own files are not sources.
    if (!input.includes("node_modules/") && !input.startsWith("<")) inputs.add(input.replace(/^.*?:/, ""));
  }
  await mkdir(DIST_DIR, { recursive: true });
  const previous = readPreviousOutputs();
  // Each file appears whole (written aside, then renamed over), so a process starting meanwhile
  // never loads half a file; a chunk's name is its content's hash, so one in use is never changed.
  await Promise.all(files.map((file) => writeWhole(path.join(DIST_DIR, file.name), file.contents)));
  const outputs = files.map((file) => file.name);
  writeWholeSync(MANIFEST, `${JSON.stringify({ builtAtMs, inputs: [...inputs].sort(), outputs, previousOutputs: previous }, null, 1)}\n`);
  // The previous build's files stay: a server started before this build may still load its chunks.
  const keep = new Set([...outputs, ...previous, "build.json"]);
  for (const name of await readdir(DIST_DIR)) {
    // (Files being written aside by a build running at the same time end in .tmp, and stay.)
    if (/\.js(\.map)?$/.test(name) && !keep.has(name)) await rm(path.join(DIST_DIR, name), { force: true, recursive: true });
  }
}

function readPreviousOutputs() {
  try {
    return JSON.parse(readFileSync(MANIFEST, "utf8")).outputs ?? [];
  } catch {
    return [];
  }
}

async function writeWhole(file, contents) {
  const aside = `${file}.${process.pid}.tmp`;
  await writeFile(aside, contents);
  await rename(aside, file);
}

function writeWholeSync(file, contents) {
  const aside = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(aside, contents);
    renameSync(aside, file);
  } catch (error) {
    rmSync(aside, { force: true });
    throw error;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === THIS_SCRIPT) {
  const started = performance.now();
  const built = await ensureBuilt({ force: process.argv.includes("--force") });
  console.log(built ? `built apps/server/dist in ${Math.round(performance.now() - started)} ms` : "apps/server/dist is up to date");
}
