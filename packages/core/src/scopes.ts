/**
 * Scopes gate routes: `os.<area>:<level>`. A key holds a set of them; a route names the one it
 * needs. Levels do not imply each other (a write-only key cannot read), so a key says exactly
 * what it may do.
 */
export const SCOPE_AREAS = [
  "notes",
  "snapshots",
  "todos",
  "team",
  "network",
  "share",
  "memory",
  "raw-memory",
  "heartbeat",
  "tools",
  "agents",
] as const;
export type ScopeArea = (typeof SCOPE_AREAS)[number];

export const SCOPE_LEVELS = ["read", "write", "run"] as const;
export type ScopeLevel = (typeof SCOPE_LEVELS)[number];

export type Scope = `os.${ScopeArea}:${ScopeLevel}`;

/** Areas with something to run, not only to read and write. */
const RUNNABLE_AREAS: readonly ScopeArea[] = ["heartbeat"];

/** Every scope there is; `users add` gives its first key all of them. */
export const ALL_SCOPES: readonly Scope[] = SCOPE_AREAS.flatMap((area) => [
  `os.${area}:read` as Scope,
  `os.${area}:write` as Scope,
  ...(RUNNABLE_AREAS.includes(area) ? [`os.${area}:run` as Scope] : []),
]);

const KNOWN = new Set<string>(ALL_SCOPES);

/**
 * Whether a credential's scopes allow `scope`. A scope allows itself; `os.memory:<level>` also allows
 * `os.raw-memory:<level>` (raw memory is ciphertext only, less than memory), so keys made before the
 * raw memory scopes existed keep what they could do.
 */
export function holdsScope(scopes: ReadonlySet<string>, scope: Scope): boolean {
  if (scopes.has(scope)) return true;
  return scope.startsWith("os.raw-memory:") && scopes.has(`os.memory:${scope.slice("os.raw-memory:".length)}`);
}

export function isScope(value: string): value is Scope {
  return KNOWN.has(value);
}

/**
 * Parses a comma-separated scope list (`os.notes:read,os.todos:write`). Throws with the
 * offending entry named, so a CLI or API caller learns exactly what is wrong.
 */
export function parseScopeList(list: string): Scope[] {
  const entries = list
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (entries.length === 0) throw new Error("no scopes given");
  for (const entry of entries) {
    if (!isScope(entry)) {
      throw new Error(`unknown scope "${entry}"; scopes look like os.notes:read (known: ${ALL_SCOPES.join(", ")})`);
    }
  }
  return [...new Set(entries)] as Scope[];
}
