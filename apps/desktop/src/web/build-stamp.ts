import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Whether `out/` was built from the sources as they are now. `npm run desktop:web` rebuilds only when
 * it was not: a hash of every file the build reads is written beside the build, and compared at
 * the next start.
 */

/** Names under the inputs that are not sources of the build: tests, and what other tools leave behind. */
const IGNORED = /^(node_modules|out|dist|\..+)$|\.test\.tsx?$/;

async function filesUnder(entry: string, root: string): Promise<string[]> {
  if (IGNORED.test(path.basename(entry))) return [];
  const relative = path.relative(root, entry).split(path.sep).join("/");
  const entries = await readdir(entry, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOTDIR") return undefined;
    if (error.code === "ENOENT") return [];
    throw error;
  });
  if (!entries) return [relative];
  const nested = await Promise.all(entries.map((child) => filesUnder(path.join(entry, child.name), root)));
  return nested.flat();
}

/** A hash of the names and contents of every file under `inputs` (files or folders), relative to `root`. */
export async function sourceHash(root: string, inputs: readonly string[]): Promise<string> {
  const files = (await Promise.all(inputs.map((input) => filesUnder(path.resolve(root, input), root)))).flat().sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(await readFile(path.join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** The hash the build in `stampFile`'s folder was made from, if any. */
export async function readStamp(stampFile: string): Promise<string | undefined> {
  try {
    return (await readFile(stampFile, "utf8")).trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

export function writeStamp(stampFile: string, hash: string): Promise<void> {
  return writeFile(stampFile, `${hash}\n`);
}

const DESKTOP_DIR = fileURLToPath(new URL("../..", import.meta.url));
const OUT_DIR = path.join(DESKTOP_DIR, "out");
const STAMP_FILE = path.join(OUT_DIR, ".source-hash");

/** What `electron-vite build` reads, relative to apps/desktop: our sources, the workspace packages it bundles, the config and the pinned dependencies. */
const BUILD_INPUTS = [
  "src",
  "electron.vite.config.ts",
  "package.json",
  "tsconfig.json",
  "../../tsconfig.base.json",
  "../../packages/core/src",
  "../../packages/core/package.json",
  "../../packages/kysely-sqlite3/src",
  "../../packages/kysely-sqlite3/package.json",
  "../../packages/unload-safe-hocuspocus/src",
  "../../packages/unload-safe-hocuspocus/package.json",
  "../../package-lock.json",
];

/**
 * Builds the app into `out/` unless it was built from these very sources already (or `force`).
 * The build prints only warnings and errors; a failed build throws.
 */
export async function buildIfChanged(options: { force?: boolean } = {}): Promise<"built" | "current"> {
  const hash = await sourceHash(DESKTOP_DIR, BUILD_INPUTS);
  const built = existsSync(path.join(OUT_DIR, "renderer", "index.html")) && (await readStamp(STAMP_FILE)) === hash;
  if (built && !options.force) return "current";
  // A build that fails halfway must not look current at the next start.
  await rm(STAMP_FILE, { force: true });
  const electronVite = path.join(
    path.dirname(createRequire(import.meta.url).resolve("electron-vite/package.json")),
    "bin/electron-vite.js",
  );
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [electronVite, "build", "--logLevel", "warn"], {
      cwd: DESKTOP_DIR,
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.once("error", reject);
    child.once("exit", resolve);
  });
  if (code !== 0) throw new Error(`electron-vite build failed (exit ${code})`);
  await writeStamp(STAMP_FILE, hash);
  return "built";
}
