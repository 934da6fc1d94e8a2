/** The current time as the API writes it: ISO 8601 UTC with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}
