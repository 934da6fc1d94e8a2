import type { WebSocket } from "ws";
import { isStorageFailure } from "../db/storage-failure";
import { ApiError } from "../http/errors";

/**
 * The WebSocket close for "storage is unreachable, come back": 1013 Try Again Later (RFC 6455's
 * registry). Hocuspocus answers any error while a document is opened (authentication, loading) with
 * "permission denied", and one while an update is checked with that document's Close: either way
 * a provider stops trying for that document, and its edits would wait for a reload. Closing the
 * socket instead makes providers reconnect with their usual backoff, open every document afresh and
 * send what the server has not acknowledged, once the database or Redis is back.
 */
export const TRY_AGAIN_LATER = { code: 1013, reason: "storage_unavailable" } as const;

const RETRY_LATER = Symbol("retryLater");

/** The connection context's part that lets a hook close its socket with {@link TRY_AGAIN_LATER}. */
export function retryLaterContext(websocket: Pick<WebSocket, "close">): Record<symbol, () => void> {
  return { [RETRY_LATER]: () => websocket.close(TRY_AGAIN_LATER.code, TRY_AGAIN_LATER.reason) };
}

/** Whether `error` means storage (the database, or Redis for documents open elsewhere) is unreachable for now. */
export function isUnavailable(error: unknown): boolean {
  return isStorageFailure(error) || (error instanceof ApiError && error.status === 503);
}

/** Closes the socket of the connection whose context this is with {@link TRY_AGAIN_LATER} (no socket, nothing). */
export function askToRetryLater(context: unknown): void {
  (context as Record<symbol, (() => void) | undefined> | undefined)?.[RETRY_LATER]?.();
}

/**
 * Runs a hook's work; if it fails because storage is unavailable, closes the connection's socket
 * with {@link TRY_AGAIN_LATER} (direct connections, REST writes, have no socket: they get the error).
 */
export async function retryLaterOnOutage<T>(context: unknown, work: () => Promise<T>, unavailable = isUnavailable): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (unavailable(error)) askToRetryLater(context);
    throw error;
  }
}
