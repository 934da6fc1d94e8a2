/** What to show the owner when something throws (host calls reject with an Error naming the problem). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
