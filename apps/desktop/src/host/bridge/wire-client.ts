import { TandemApiError, TandemClient } from "@tandem/core";

/** Bridges time out a call after about 5 s (runtime-wire.md "Transport"); heartbeats get 10 s. */
export const REQUEST_TIMEOUT_MS = 5_000;
export const HEARTBEAT_TIMEOUT_MS = 10_000;

/** `http://host:port` → `http://host:port/api/v1`. */
export function apiUrlOf(serverUrl: string): string {
  return `${serverUrl.replace(/\/+$/, "")}/api/v1`;
}

/**
 * A v1 client speaking as the bridge: the device token (or `anonymous` for pairing), no redirects
 * (TandemClient refuses them) and a timeout on every call, so a stalled server never wedges a loop.
 */
export function wireClient(serverUrl: string, token: string, timeoutMs = REQUEST_TIMEOUT_MS): TandemClient {
  const timedFetch: typeof fetch = (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  return new TandemClient({ baseUrl: apiUrlOf(serverUrl), token, fetch: timedFetch });
}

/** Whether `error` is the server's answer (as opposed to a transport failure), optionally with this status. */
export function isApiError(error: unknown, status?: number): error is TandemApiError {
  return error instanceof TandemApiError && (status === undefined || error.status === status);
}

/** The `error` code of a server answer, if `error` is one. */
export function apiErrorCode(error: unknown): string | null {
  return error instanceof TandemApiError && typeof error.body.error === "string" ? error.body.error : null;
}

export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Runs an idempotent call, retrying transport errors (timeouts, refused connections) a few times;
 * a real HTTP error is the server's answer and is never retried (runtime-wire.md "Transport").
 */
export async function retryTransport<T>(
  call: () => Promise<T>,
  options: { attempts?: number; delayMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (error instanceof TandemApiError || attempt >= attempts || options.signal?.aborted) throw error;
      await delay((options.delayMs ?? 500) * attempt, options.signal);
    }
  }
}

/** A short, log-safe description of a failure (never a token: errors carry only status and code). */
export function describeError(error: unknown): string {
  if (error instanceof TandemApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
