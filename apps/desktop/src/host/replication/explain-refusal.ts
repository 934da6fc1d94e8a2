import { serverClient } from "../session/server-client";

/**
 * Why the server refused to sync one of the user's own documents. The sync protocol only says
 * "permission denied", so ask the REST API whether the key itself is still good.
 */
export async function explainRefusal(serverUrl: string, apiKey: string, documentName: string): Promise<string> {
  try {
    const answer = await serverClient(serverUrl, apiKey).raw("identity");
    if (answer.status === 401) return "The server no longer accepts this app's API key (revoked or expired): sign out and sign in again";
  } catch {
    // Unreachable right now: the refusal itself is all there is to say.
  }
  return `The server refused to sync ${documentName}: check that the API key still has the os.notes and os.todos scopes`;
}
