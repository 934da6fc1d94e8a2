import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PRE_TOOL_USE_HOOK_SOURCE } from "./hook-script";

/** The bridge waits up to 5 minutes for the owner; the script gives up a little later, denying. */
export const HOOK_SCRIPT_TIMEOUT_MS = 330_000;
/** Claude Code's own timeout for the hook (seconds) is longer still, so the script always answers first. */
export const CLAUDE_HOOK_TIMEOUT_S = 360;

export interface HookFiles {
  /** Claude Code settings (`--settings <path>`) registering the hook for every tool. */
  readonly settingsPath: string;
  /** The hook script and its configuration, as Claude will run them. */
  readonly scriptPath: string;
  readonly configPath: string;
  /** Environment Claude must pass to the hook (only on Windows inside Electron; see below). */
  readonly env: NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

/**
 * Writes one task's hook into a new private temp directory (0700, files 0600): the script, its
 * configuration (the loopback URL and the task's token, never on a command line, where other users
 * could read it) and Claude's settings registering it.
 */
export async function writeHookFiles(hook: { url: string; token: string }): Promise<HookFiles> {
  const dir = await mkdtemp(path.join(tmpdir(), "tandem-hook-"));
  const scriptPath = path.join(dir, "hook.mjs");
  const configPath = path.join(dir, "hook.json");
  const settingsPath = path.join(dir, "settings.json");
  await writeFile(scriptPath, PRE_TOOL_USE_HOOK_SOURCE, { mode: 0o600 });
  await writeFile(configPath, JSON.stringify({ url: hook.url, token: hook.token, timeoutMs: HOOK_SCRIPT_TIMEOUT_MS }), { mode: 0o600 });
  const words = [process.execPath, scriptPath, configPath].map(quoteForShell).join(" ");
  // Inside Electron, process.execPath is the app: ELECTRON_RUN_AS_NODE makes it run the script as
  // plain Node. Set for the hook alone where the shell allows, so tools Claude runs never inherit it.
  const electron = Boolean(process.versions.electron);
  const command = electron && process.platform !== "win32" ? `ELECTRON_RUN_AS_NODE=1 ${words}` : words;
  const settings = {
    // Flag settings override the user's and the project's: hooks stay on and ours sees every tool.
    disableAllHooks: false,
    hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command, timeout: CLAUDE_HOOK_TIMEOUT_S }] }] },
  };
  await writeFile(settingsPath, JSON.stringify(settings, null, 2), { mode: 0o600 });
  const env: NodeJS.ProcessEnv = electron && process.platform === "win32" ? { ELECTRON_RUN_AS_NODE: "1" } : {};
  return { settingsPath, scriptPath, configPath, env, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Claude runs hook commands through a shell: quote each word so paths with spaces stay whole. */
export function quoteForShell(word: string): string {
  if (process.platform === "win32") return `"${word.replaceAll('"', '\\"')}"`;
  return `'${word.replaceAll("'", "'\\''")}'`;
}
