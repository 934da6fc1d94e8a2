import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import type { RawMemoryRuntime } from "@tandem/core";

/**
 * Where the local coding agents keep their sessions (docs/raw-memory.md):
 * - Claude Code: `$CLAUDE_CONFIG_DIR` or `~/.claude`, then `projects/<project>/<session-id>.jsonl`
 *   (one folder per working directory; the session's side folders beside it are not sessions);
 * - Codex: `$CODEX_HOME` or `~/.codex`, then `sessions/YYYY/MM/DD/rollout-<time>-<session-id>.jsonl`.
 */
export interface SessionRoots {
  readonly claudeCode: string;
  readonly codex: string;
}

export function defaultRoots(env: NodeJS.ProcessEnv = process.env): SessionRoots {
  return {
    claudeCode: path.join(env.CLAUDE_CONFIG_DIR || path.join(homedir(), ".claude"), "projects"),
    codex: path.join(env.CODEX_HOME || path.join(homedir(), ".codex"), "sessions"),
  };
}

export interface SessionFile {
  readonly runtime: RawMemoryRuntime;
  readonly sessionId: string;
  readonly file: string;
  readonly bytes: number;
  readonly modifiedMs: number;
}

async function list(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

async function described(runtime: RawMemoryRuntime, sessionId: string, file: string): Promise<SessionFile | null> {
  try {
    const info = await stat(file);
    return info.isFile() ? { runtime, sessionId, file, bytes: info.size, modifiedMs: info.mtimeMs } : null;
  } catch {
    return null;
  }
}

const ROLLOUT = /^rollout-.*?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** Every session file under the roots, with its size and last change; a missing root has none. */
export async function findSessions(roots: SessionRoots): Promise<SessionFile[]> {
  const found: (SessionFile | null)[] = [];
  for (const project of await list(roots.claudeCode)) {
    if (!project.isDirectory()) continue;
    const dir = path.join(roots.claudeCode, project.name);
    for (const entry of await list(dir)) {
      if (entry.isFile() && entry.name.endsWith(".jsonl")) {
        found.push(await described("claude-code", entry.name.slice(0, -".jsonl".length), path.join(dir, entry.name)));
      }
    }
  }
  for (const year of await list(roots.codex)) {
    if (!year.isDirectory() || !/^\d{4}$/.test(year.name)) continue;
    for (const month of await list(path.join(roots.codex, year.name))) {
      if (!month.isDirectory()) continue;
      for (const day of await list(path.join(roots.codex, year.name, month.name))) {
        if (!day.isDirectory()) continue;
        const dir = path.join(roots.codex, year.name, month.name, day.name);
        for (const entry of await list(dir)) {
          const match = entry.isFile() ? ROLLOUT.exec(entry.name) : null;
          if (match?.[1]) found.push(await described("codex", match[1].toLowerCase(), path.join(dir, entry.name)));
        }
      }
    }
  }
  return found.filter((file): file is SessionFile => file !== null);
}
