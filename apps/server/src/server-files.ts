import { fileURLToPath } from "node:url";

/**
 * The server package's folder, whether it runs from its TypeScript sources (tsx in development,
 * vitest) or from the build in dist/ (`npm start`, the CLI): this module sits one folder below the
 * package in both (src/server-files.ts, or bundled into a file of dist/), so `..` is the package.
 */
const SERVER_PACKAGE_URL = new URL("..", import.meta.url);

export const SERVER_PACKAGE_DIR = fileURLToPath(SERVER_PACKAGE_URL);

/** Whether this is the build in dist/ rather than the sources. */
export const RUNS_BUILT = !import.meta.url.endsWith(".ts");

/** A file of the build in dist/ (see scripts/build.mjs). */
export function builtFile(name: string): URL {
  return new URL(`dist/${name}`, SERVER_PACKAGE_URL);
}
