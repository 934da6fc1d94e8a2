import type { SessionRoots } from "./session-files";

/** Raw memory's settings for tests; the app uses the defaults. */
export interface RawMemoryOptions {
  /** Where the agents' sessions are (tests point at temporary folders). */
  readonly roots?: Partial<SessionRoots>;
  /** How often the session folders are looked at, in ms (default 30 s). */
  readonly pollMs?: number;
  /** How long a session file must stay unchanged to count as finished, in ms (default 10 minutes). */
  readonly quietMs?: number;
  /** scrypt's cost for a new recovery code (tests use a lower one). */
  readonly scrypt?: { N: number; r: number; p: number };
}
