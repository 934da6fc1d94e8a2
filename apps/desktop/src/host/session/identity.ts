import { routes } from "@tandem/core";
import { serverClient, serverMessage, unreachableError } from "./server-client";

export interface VerifiedIdentity {
  readonly userId: number;
  readonly username: string;
  readonly name: string | null;
}

/** What the desktop does with a key: read and write notes and todos (over sync and REST). */
export const REQUIRED_SCOPES = ["os.notes:read", "os.notes:write", "os.todos:read", "os.todos:write"] as const;

/** The server could not be asked at all (down, or no network), as opposed to answering no. */
export class ServerUnreachableError extends Error {}

/**
 * Asks the server who `apiKey` belongs to (`GET /identity`) and checks it can be the desktop's
 * key: an API key (not a bridge's device token) with the scopes sync needs. Every failure is an
 * Error whose message says what to do.
 */
export async function verifyApiKey(serverUrl: string, apiKey: string): Promise<VerifiedIdentity> {
  let answer: { status: number; body: unknown };
  try {
    answer = await serverClient(serverUrl, apiKey).raw("identity");
  } catch (error) {
    const unreachable = unreachableError(serverUrl, error);
    throw new ServerUnreachableError(unreachable.message, { cause: unreachable.cause });
  }
  if (answer.status === 401) {
    throw new Error("The server refused this API key: it is wrong, revoked or expired");
  }
  const identity = routes.identity.response.safeParse(answer.body);
  if (answer.status !== 200 || !identity.success) {
    const detail = serverMessage(answer.body);
    throw new Error(
      `${serverUrl} does not look like a Tandem server (GET /api/v1/identity answered ${answer.status}${detail ? `: ${detail}` : ""})`,
    );
  }
  const { userId, username, name, credential } = identity.data;
  if (credential.type !== "api_key") {
    const what = credential.type === "oauth_token" ? "an app's access token" : "a device token (a bridge's credential)";
    throw new Error(`This is ${what}; sign in with an API key (svc_sk_…)`);
  }
  const missing = REQUIRED_SCOPES.filter((scope) => !credential.scopes.includes(scope));
  if (missing.length > 0) {
    throw new Error(`This API key lacks ${missing.join(", ")}, which the desktop needs to sync notes and todos`);
  }
  return { userId, username, name };
}
