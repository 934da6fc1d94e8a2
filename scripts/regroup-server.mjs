#!/usr/bin/env node
/**
 * Groups the server's feature folders (apps/server/src/<folder>) by the part of the product they
 * belong to, so the tree reads like docs/: `workspace/`, `agent/`, `delegation/`, `people/`, with the
 * platform pieces (http, auth, db, sync, …) left at the top. See docs/development.md "Layout".
 *
 *   node scripts/regroup-server.mjs            # move and rewrite (the working tree must be clean)
 *   node scripts/regroup-server.mjs --dry-run  # print the moves and the files it would rewrite
 *
 * Only FOLDER_GROUPS below is hard-coded. Everything else is computed from the tree it finds, so it
 * runs on a later main too: each folder is moved with `git mv` (history follows), then every path
 * that pointed into a moved folder, or from a moved file, is rewritten in every tracked text file:
 *
 * - string literals that start with `./` or `../` in code and JSON (import/export specifiers,
 *   `import()`, `vi.mock`, `new URL("…", import.meta.url)`, path literals, package.json `exports`),
 *   resolved against the file's own folder; and, in apps/server, literals that start with `src/`
 *   (relative to the package);
 * - relative links in Markdown (`[text](../apps/server/src/…)`);
 * - repository-relative mentions anywhere (`apps/server/src/notes/…` in docs, CI scripts, comments),
 *   and in Markdown, files named relative to apps/server/src (`grep/line-matcher.ts`) that exist there.
 *
 * A relative literal is rewritten only if what it names exists (a file, with or without its
 * extension, or a folder), so strings that merely look like paths are left alone. What it cannot
 * place (template literals with `${…}`, bare folder names in prose) it lists at the end for a person
 * to check. It finishes with `biome check --write` on the files it changed (import order follows the
 * new specifiers). A folder missing from the map stops it before anything is moved.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Folder of apps/server/src → the group it moves into; "" leaves it at the top (a platform piece). */
const FOLDER_GROUPS = {
  // The workspace: notes and what is built from them (docs/api.md, docs/sync.md).
  workspace: "workspace", // workspace-routes.ts: stays, and becomes the group's own folder
  notes: "workspace",
  folders: "workspace",
  todos: "workspace",
  trash: "workspace",
  snapshots: "workspace",
  search: "workspace",
  grep: "workspace",
  text: "workspace",
  views: "workspace",
  accumulate: "workspace",
  memory: "workspace",
  // The agent (docs/agent.md, docs/mcp.md, docs/mcp-servers.md).
  agent: "agent", // already the group's folder
  "mcp-server": "agent",
  a2a: "agent",
  // Delegation (docs/delegation/: runtime, grants, approvals, delegations, realtime).
  runtime: "delegation",
  grants: "delegation",
  approvals: "delegation",
  delegations: "delegation",
  realtime: "delegation",
  // People (docs/team.md, docs/messaging.md, docs/share-links.md; the handshake of docs/delegation/network.md).
  users: "people",
  network: "people",
  team: "people",
  messaging: "people",
  sharing: "people",
  share: "people",
  // The platform.
  http: "",
  auth: "",
  oauth: "",
  db: "",
  sync: "",
  system: "",
  shared: "",
  crypto: "",
  cli: "",
  audit: "",
  webhooks: "",
};

const CODE = /\.(?:[cm]?[jt]sx?|jsonc?)$/;
const MARKDOWN = /\.md$/;
const TEXT = /\.(?:[cm]?[jt]sx?|jsonc?|md|sh|ya?ml|txt|html|css)$|(?:^|\/)[^./]+$/;
/** The lockfile names no source path; this script's own examples must stay as they are. */
const SKIPPED = new Set(["package-lock.json", "scripts/regroup-server.mjs"]);
const RESOLVE_SUFFIXES = ["", ".ts", ".tsx", ".mts", ".js", ".mjs", ".json", "/index.ts", "/index.tsx"];

const dryRun = process.argv.includes("--dry-run");
const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim();
const serverDir = path.join(root, "apps/server");
const srcDir = path.join(serverDir, "src");
const toRepo = (absolute) => path.relative(root, absolute).split(path.sep).join("/");

function git(...args) {
  return execFileSync("git", args, { cwd: root, encoding: "utf8", maxBuffer: 1 << 28 });
}

// --- The moves, from the folders found -------------------------------------------------------

const groups = new Set(Object.values(FOLDER_GROUPS).filter(Boolean));
const folders = readdirSync(srcDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const unmapped = folders.filter((name) => !(name in FOLDER_GROUPS) && !groups.has(name));
if (unmapped.length > 0) {
  console.error(`regroup-server: no group for ${unmapped.map((name) => `${name}/`).join(", ")}; add them to FOLDER_GROUPS.`);
  process.exit(1);
}
/** [old folder, new folder], absolute. */
const moves = folders
  .filter((name) => FOLDER_GROUPS[name] && FOLDER_GROUPS[name] !== name)
  .map((name) => [path.join(srcDir, name), path.join(srcDir, FOLDER_GROUPS[name], name)]);
if (moves.length === 0) {
  console.log("regroup-server: every folder is in its group already; nothing to do.");
  process.exit(0);
}
for (const [from, to] of moves) {
  if (existsSync(to)) throw new Error(`${toRepo(to)} exists already; move ${toRepo(from)} by hand or rename it first.`);
}
if (!dryRun && git("status", "--porcelain").trim() !== "") {
  console.error("regroup-server: the working tree has changes; commit them first (the moves and rewrites should be one reviewable step).");
  process.exit(1);
}

/** Where a path (absolute, old tree) is after the moves. */
function moved(absolute) {
  for (const [from, to] of moves) {
    if (absolute === from || absolute.startsWith(from + path.sep)) return to + absolute.slice(from.length);
  }
  return absolute;
}

function exists(absolute) {
  const plain = absolute.replace(/[?#].*$/, "");
  const candidates = RESOLVE_SUFFIXES.map((suffix) => plain + suffix);
  // Under "moduleResolution: bundler", `./x.js` may name x.ts.
  if (/\.[cm]?js$/.test(plain)) candidates.push(plain.replace(/js$/, "ts"));
  return candidates.some((candidate) => existsSync(candidate));
}

/** The specifier from `fromFile` (new place) to `target` (new place), in the style of `original`. */
function specifier(fromFile, target, original) {
  let relative = path.relative(path.dirname(fromFile), target).split(path.sep).join("/");
  if (!relative.startsWith(".")) relative = `./${relative}`;
  if (original.endsWith("/") && !relative.endsWith("/")) relative += "/";
  return relative;
}

// --- The rewrites, computed on the old tree --------------------------------------------------

const unplaced = [];
const movedFolderNames = moves.map(([from]) => path.basename(from));
const repoMention = new RegExp(
  `(?<![\\w./-])apps/server/src/(${movedFolderNames.map((name) => name.replace(/[-]/g, "\\-")).join("|")})(?=[/\\s"'\`)\\]#:,;]|$)`,
  "g",
);

const serverFileMention = new RegExp(
  `\`((?:${movedFolderNames.map((name) => name.replace(/[-]/g, "\\-")).join("|")})/[\\w./-]+\\.[a-z]+)\``,
  "g",
);

/** Rewrites one literal path `value` (relative to `base`) found in `file`; undefined: leave it. */
function rewritePath(file, base, value) {
  if (value.includes("${")) {
    const target = path.resolve(base, value.split("${")[0]);
    if (moved(target) !== target || moved(file) !== file) unplaced.push(`${toRepo(file)}: ${value}`);
    return undefined;
  }
  const [plain, suffix = ""] = value.split(/(?=[?#])/, 2);
  const target = path.resolve(base, plain);
  if (moved(target) === target && moved(file) === file) return undefined;
  if (!exists(target)) return undefined;
  const next = base === path.dirname(file) ? specifier(moved(file), moved(target), plain) : toBase(base, moved(target), plain);
  return next === plain ? undefined : next + suffix;
}

/** A path relative to a fixed base (apps/server for `src/…` literals). */
function toBase(base, target, original) {
  const relative = path.relative(base, target).split(path.sep).join("/");
  return original.startsWith("./") ? `./${relative}` : relative;
}

function rewriteCode(file, text) {
  const dir = path.dirname(file);
  const inServer = file.startsWith(serverDir + path.sep);
  // `new URL("..", import.meta.url)`: the parent folder, which a bare ".." elsewhere (a comparison, a
  // path.join segment) need not mean, so only here. "." is the file's own folder wherever it moves.
  text = text.replace(/(new URL\(\s*)(["'`])(\.\.)\2/g, (whole, head, quote, value) => {
    const next = rewritePath(file, dir, value);
    return next === undefined ? whole : `${head}${quote}${next.replace(/\/$/, "")}${quote}`;
  });
  return text.replace(/(["'`])((?:\.{1,2}\/|src\/)[^"'`\n]*)\1/g, (whole, quote, value) => {
    const base = value.startsWith("src/") ? (inServer ? serverDir : undefined) : dir;
    if (!base) return whole;
    const next = rewritePath(file, base, value);
    return next === undefined ? whole : `${quote}${next}${quote}`;
  });
}

function rewriteMarkdown(file, text) {
  const dir = path.dirname(file);
  const link = (whole, head, value, tail) => {
    if (/^[a-z]+:|^#|^\//i.test(value)) return whole;
    const next = rewritePath(file, dir, value);
    return next === undefined ? whole : `${head}${next}${tail}`;
  };
  return text.replace(/(\]\()([^)\s]+)(\))/g, link).replace(/^(\[[^\]]+\]:\s*)(\S+)()/gm, link);
}

/**
 * Docs name server files relative to apps/server/src (`grep/line-matcher.ts`): rewritten when that
 * file exists there, so the desktop's own `runtime/…` or `notes/…` are left alone.
 */
function rewriteServerFileMentions(text) {
  return text.replace(serverFileMention, (whole, relative) =>
    existsSync(path.join(srcDir, relative))
      ? `\`${path
          .relative(srcDir, moved(path.join(srcDir, relative)))
          .split(path.sep)
          .join("/")}\``
      : whole,
  );
}

function rewriteMentions(text) {
  return text.replace(repoMention, (_whole, name) => `apps/server/src/${path.relative(srcDir, moved(path.join(srcDir, name)))}`);
}

/** Prose that names a moved folder in a way no rule can place (`views/`, "the notes folder"). */
function noteBareMentions(file, text) {
  // development.md's map names the folders within their groups on purpose; docs/desktop/ names the desktop's.
  if (!MARKDOWN.test(file) || toRepo(file) === "docs/development.md" || toRepo(file).startsWith("docs/desktop/")) return;
  for (const name of movedFolderNames) {
    if (new RegExp(`\`${name}/(?:\`|[\\w.-]+\\.m?[jt]s\`)`).test(text)) unplaced.push(`${toRepo(file)}: mentions \`${name}/…\``);
  }
}

const files = git("ls-files", "-z")
  .split("\0")
  .filter((name) => name && TEXT.test(name) && !SKIPPED.has(name) && !name.startsWith("docs/screenshots/"))
  .map((name) => path.join(root, name))
  .filter((file) => existsSync(file) && statSync(file).isFile());

/** New absolute path → new contents, for every file whose contents change. */
const rewrites = new Map();
for (const file of files) {
  const before = readFileSync(file, "utf8");
  if (before.includes("\0")) continue;
  let after = before;
  if (CODE.test(file)) after = rewriteCode(file, after);
  if (MARKDOWN.test(file)) after = rewriteServerFileMentions(rewriteMarkdown(file, after));
  after = rewriteMentions(after);
  noteBareMentions(file, after);
  if (after !== before) rewrites.set(moved(file), after);
}

// --- Apply ------------------------------------------------------------------------------------

for (const [from, to] of moves) console.log(`move    ${toRepo(from)}/ → ${toRepo(to)}/`);
for (const file of rewrites.keys()) console.log(`rewrite ${toRepo(file)}`);
console.log(`${moves.length} folders to move, ${rewrites.size} files to rewrite.`);
if (unplaced.length > 0) {
  console.log("\nCheck by hand (no rule could place these):");
  for (const line of [...new Set(unplaced)]) console.log(`  ${line}`);
}
if (dryRun) process.exit(0);

for (const [from, to] of moves) {
  mkdirSync(path.dirname(to), { recursive: true });
  git("mv", toRepo(from), toRepo(to));
}
for (const [file, text] of rewrites) writeFileSync(file, text);
const changed = [...rewrites.keys()].filter((file) => /\.(?:[cm]?[jt]sx?|jsonc?)$/.test(file)).map(toRepo);
if (changed.length > 0) {
  execFileSync("npx", ["biome", "check", "--write", "--no-errors-on-unmatched", ...changed], { cwd: root, stdio: "inherit" });
}
git("add", "-A"); // the tree was clean before: everything changed is the regrouping
console.log("\nDone: review `git status`, run the type checks and tests, then commit.");
