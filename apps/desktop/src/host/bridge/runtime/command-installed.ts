import { constants } from "node:fs";
import { access } from "node:fs/promises";
import path from "node:path";

/**
 * Whether a runtime's command can be started here: an executable file at its path, or in a PATH
 * directory (with PATHEXT's extensions on Windows), as `spawn` would find it. Checked before any
 * task arrives, so the owner learns "not installed" from the Bridge view rather than from a
 * failed task.
 */
export async function commandInstalled(command: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const hasDirectory = command.includes("/") || command.includes(path.sep);
  const candidates = hasDirectory
    ? [command]
    : (env.PATH ?? "")
        .split(path.delimiter)
        .filter(Boolean)
        .map((directory) => path.join(directory, command));
  const extensions = process.platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";")] : [""];
  for (const candidate of candidates) {
    for (const extension of extensions) {
      try {
        await access(candidate + extension, constants.X_OK);
        return true;
      } catch {
        // Not here; the next place.
      }
    }
  }
  return false;
}
