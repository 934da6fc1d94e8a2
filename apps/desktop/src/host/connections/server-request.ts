import { API_BASE_PATH, TandemApiError } from "@tandem/core";
import { REQUEST_TIMEOUT_MS } from "../session/server-client";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/**
 * One request to a v1 route that core's typed client does not declare yet (remote tool servers and
 * connected apps are being added beside this view). It behaves as `TandemClient.call` does: the
 * JSON success body, or a {@link TandemApiError} carrying the error body, so the same words apply.
 */
export async function requestServer(
  credentials: { serverUrl: string; apiKey: string },
  method: HttpMethod,
  path: string,
  body?: unknown,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json", authorization: `Bearer ${credentials.apiKey}` };
  const hasBody = method === "POST" || method === "PATCH";
  if (hasBody) headers["content-type"] = "application/json";
  const response = await fetch(`${credentials.serverUrl}${API_BASE_PATH}${path}`, {
    method,
    headers,
    body: hasBody ? JSON.stringify(body ?? {}) : undefined,
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: unknown = null;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (response.status < 200 || response.status >= 300) {
    const errorBody = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : { message: String(parsed) };
    throw new TandemApiError(response.status, errorBody);
  }
  return parsed;
}

/** A path segment from an id the renderer sent: encoded, so it can never reach another route. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}
