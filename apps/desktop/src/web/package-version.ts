import { readFile } from "node:fs/promises";

/** Web mode has no Electron `app.getVersion()`; the desktop package's own version is the same number. */
export async function readDesktopVersion(): Promise<string> {
  const packageJson: { version: string } = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
  return packageJson.version;
}
