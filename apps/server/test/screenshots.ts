import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where the browser tests save their screenshots. `npm test` must leave the working tree as it
 * found it, so by default they go to a temporary folder; `npm run screenshots` sets
 * {@link UPDATE_SCREENSHOTS_ENV} to make the same tests write the documentation's pictures in
 * `docs/screenshots/`. Shared by the server's and the desktop's browser tests.
 */
export const UPDATE_SCREENSHOTS_ENV = "TANDEM_UPDATE_SCREENSHOTS";

export const DOCS_SCREENSHOTS_DIR = fileURLToPath(new URL("../../../docs/screenshots/", import.meta.url));

/** The folder screenshots go to in this run (created if missing). */
export function screenshotsDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env[UPDATE_SCREENSHOTS_ENV] === "1" ? DOCS_SCREENSHOTS_DIR : path.join(tmpdir(), "tandem-test-screenshots");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The file for the screenshot `name` (`<dir>/<name>.png`). */
export function screenshotPath(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(screenshotsDir(env), `${name}.png`);
}
