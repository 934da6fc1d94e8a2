import { API_BASE_PATH, TandemClient } from "@tandem/core";

/** A request to the server that has not answered by then is given up, with a message that says so. */
export const REQUEST_TIMEOUT_MS = 15_000;

const timedFetch =
  (timeoutMs: number): typeof fetch =>
  (input, init) =>
    fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(timeoutMs) });

/**
 * A v1 client for the server at `serverUrl` (`http(s)://host:port`), with `token` if given.
 * `validateResponses` checks success bodies against the route table: for answers the app cannot
 * do without, from a server it has not verified yet. `timeoutMs` is for the few requests that do
 * real work before answering (a briefing written by a model).
 */
export function serverClient(serverUrl: string, token?: string, validateResponses = false, timeoutMs = REQUEST_TIMEOUT_MS): TandemClient {
  return new TandemClient({ baseUrl: `${serverUrl}${API_BASE_PATH}`, token, fetch: timedFetch(timeoutMs), validateResponses });
}

/** Why a request to the server did not get an answer, in words a person can act on. */
export function unreachableError(serverUrl: string, error: unknown): Error {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") {
    return new Error(`The server at ${serverUrl} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`, { cause: error });
  }
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === "string" ? ` (${cause.code})` : "";
  return new Error(`Could not reach the server at ${serverUrl}${code}: check the address and your connection`, { cause: error });
}

/** The server's own words from an error body, if it sent any (shortened: it may be a whole HTML page). */
export function serverMessage(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | null)?.message;
  if (typeof message !== "string") return undefined;
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
