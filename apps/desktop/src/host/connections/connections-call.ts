import { TandemApiError } from "@tandem/core";
import type { z } from "zod";
import { onServer } from "../on-server";

export const CONNECTIONS_OFFLINE =
  "Can't reach the server right now. Connections are kept on the server; try again once you are back online.";

/** The server's refusal behind an error, whether thrown as is or wrapped in words by {@link connectionsCall}. */
function apiErrorOf(error: unknown): TandemApiError | null {
  if (error instanceof TandemApiError) return error;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof TandemApiError ? cause : null;
}

/** The server has no such route at all (an older server), as opposed to "no such object" (`not_found`). */
export function isRouteMissing(error: unknown): boolean {
  const refusal = apiErrorOf(error);
  return refusal !== null && refusal.status === 404 && refusal.body.error === "route_not_found";
}

/** The route exists but the object it names does not (removed meanwhile, or never the caller's). */
export function isObjectMissing(error: unknown): boolean {
  const refusal = apiErrorOf(error);
  return refusal !== null && refusal.status === 404 && refusal.body.error !== "route_not_found";
}

/** Said when a remote tool server route is missing on the server. */
export const MCP_UNSUPPORTED = "This server doesn't support remote tool servers yet.";

/**
 * Said instead of the list when the desktop's key lacks the `os.tools` scopes: a sign-in by pairing
 * code gets a key without them, on purpose (the server's SIGN_IN_SCOPES), so this is no failure.
 */
export const MCP_NOT_ALLOWED =
  "This desktop's key is not allowed to manage remote tool servers: it lacks the os.tools:read and os.tools:write permissions. " +
  "A desktop signed in with a pairing code never has them. To manage remote tool servers here, sign out and sign in with an API key that has them.";

/** The server refused because the key lacks a scope the route needs. */
export function lacksScope(error: unknown): boolean {
  return apiErrorOf(error)?.body.error === "insufficient_scope";
}

/**
 * Runs a request with {@link onServer}'s words (`offline` says what stays where while the server is
 * out of reach), and says what a key without the needed scope lacks rather than "403". The inbox and
 * the share links use it too.
 */
export async function connectionsCall<T>(request: () => Promise<T>, offline = CONNECTIONS_OFFLINE): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof TandemApiError && error.body.error === "insufficient_scope") {
      const named = typeof error.body.message === "string" ? error.body.message.match(/\b[a-z]+\.[a-z]+:[a-z]+\b/g) : null;
      const scopes = named ? named.join(", ") : "the scope this needs";
      throw new Error(`Your API key cannot do this (it lacks ${scopes}). Sign in with a key that has it.`, { cause: error });
    }
    return onServer(() => Promise.reject(error), offline);
  }
}

/** Reads an answer the app did not get from core's typed client; a shape it cannot read is said in words. */
export function readAnswer<T>(schema: z.ZodType<T>, answer: unknown, what: string): T {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return parsed.data;
  throw new Error(`The server's answer about ${what} was not understood; this app may need an update.`);
}

/** Only web addresses are opened: a remote server chose this one, and `file:` or `javascript:` must never run. */
export function webAddress(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:";
  } catch {
    return false;
  }
}
