/** The current time as the API writes it: ISO 8601 UTC with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}

/**
 * The time the delegation layer goes by. Expiries of grants, approvals and pairings are minutes
 * long; tests move this clock forward instead of waiting, against the real server in-process.
 */
export class Clock {
  #offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.#offsetMs);
  }

  nowMs(): number {
    return Date.now() + this.#offsetMs;
  }

  iso(): string {
    return this.now().toISOString();
  }

  /** ISO time `ms` from now. */
  isoIn(ms: number): string {
    return new Date(this.nowMs() + ms).toISOString();
  }

  /** Tests only: jump forward. */
  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}
