// Refresh tokens rotate: each is good for one refresh. When several calls to one server find the
// access token expired at once, each would refresh with the same refresh token, and all but the
// first would be refused (and drop the authorization). So refreshes of one server's tokens take
// turns, and a call whose tokens were replaced by another call's refresh since it started gets
// those new tokens instead of asking the authorization server again. (Within one Tandem process; instances sharing a
// database may still race, and the loser then retries once with the tokens stored meanwhile.)

import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { AppContext } from "../../../context";
import type { FetchLike } from "./guarded-fetch";
import { openSealed, SEALED, serverById } from "./mcp-store";

/** The longest a refresh holds its turn waiting for its tokens to be stored. */
const HOLD_MS = 5_000;

const turns = new Map<string, Promise<void>>();

/** Waits for the earlier holders of `key`; the answer gives the turn back (once, whatever is called). */
async function takeTurn(key: string): Promise<() => void> {
  const previous = turns.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const chain = previous.then(() => mine);
  turns.set(key, chain);
  await previous;
  let given = false;
  return () => {
    if (given) return;
    given = true;
    release();
    if (turns.get(key) === chain) turns.delete(key);
  };
}

/**
 * Wraps the fetch the SDK's OAuth client uses for one server: token requests with
 * `grant_type=refresh_token` take turns; `holder.onTokensSaved` is set to end the turn once the
 * new tokens are stored.
 */
export function singleFlightRefresh(
  app: AppContext,
  serverId: string,
  fetch: FetchLike,
  holder: { onTokensSaved?: () => void; readonly firstTokensSeen?: string | null },
): FetchLike {
  return async (url, init) => {
    const params = init?.body instanceof URLSearchParams ? init.body : undefined;
    if (params?.get("grant_type") !== "refresh_token") return fetch(url, init);
    const release = await takeTurn(serverId);
    try {
      const row = await serverById(app.db, serverId);
      const stored = openSealed<OAuthTokens & { issuer?: string }>(app.secrets, row?.oauth_tokens, SEALED.tokens, serverId);
      const replaced = row?.oauth_tokens !== holder.firstTokensSeen || stored?.refresh_token !== params.get("refresh_token");
      if (stored?.access_token && replaced) {
        // Another call refreshed since this one started: its tokens are this one's answer.
        release();
        const { issuer: _issuer, ...tokens } = stored;
        return Response.json(tokens);
      }
      const response = await fetch(url, init);
      if (!response.ok) {
        release();
        return response;
      }
      holder.onTokensSaved = release;
      setTimeout(release, HOLD_MS).unref();
      return response;
    } catch (error) {
      release();
      throw error;
    }
  };
}
