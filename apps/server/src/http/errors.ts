/**
 * The one error class the API throws. Services raise it through the factories below so every
 * failure carries a status and a stable snake_case code that clients can branch on.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const badRequest = (code: string, message: string) => new ApiError(400, code, message);
export const missingCredential = () =>
  new ApiError(401, "missing_credential", "Send a credential as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'");
export const invalidCredential = () =>
  new ApiError(401, "invalid_credential", "The credential is not valid: unknown, malformed or revoked");
export const forbidden = (code: string, message: string) => new ApiError(403, code, message);
export const notFound = (what: string) => new ApiError(404, "not_found", `${what} not found`);
export const conflict = (code: string, message: string) => new ApiError(409, code, message);
/** A managed agent its owner paused, reached by any path (its key, its runs, a message, A2A). */
export const agentPaused = (handle: string) => new ApiError(409, "agent_paused", `The agent ${handle} is paused by its owner`);
export const unprocessable = (code: string, message: string) => new ApiError(422, code, message);
/** Storage is full, read-only or unreachable; `message` says what became of the request's change. */
export const storageUnavailable = (
  message = "Storage is unavailable (full, read-only or unreachable), so nothing was changed. Retry later",
) => new ApiError(503, "storage_unavailable", message, { "retry-after": "5" });
export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(429, "rate_limited", `Too many requests; retry after ${retryAfterSeconds} s`, {
    "retry-after": String(retryAfterSeconds),
  });
