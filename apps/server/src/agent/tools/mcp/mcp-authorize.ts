// The OAuth 2.1 flow a user starts for a remote tool server, with the SDK doing the protocol:
// discovery from the server's 401 (its `WWW-Authenticate: Bearer resource_metadata=...`) to the
// protected-resource metadata to the authorization server's metadata, dynamic client registration
// (a public client), PKCE S256 and `resource`. We keep the state: single use, expiring, and bound
// to the server's row, so to its owner. The state alone does not say who the browser is, so the
// callback completes only for the owner's browser (see mcp-routes.ts, `mcpOAuthCallback`).

import { BlockList, isIP } from "node:net";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { AppContext } from "../../../context";
import { ApiError } from "../../../http/errors";
import { AddressRefused } from "./address-guard";
import type { FetchLike } from "./guarded-fetch";
import { loadMcpClientSdk, type McpClientSdk, refreshServer, remoteFetch } from "./mcp-connection";
import { hashState, type McpServerRow, openSealed, SEALED, serverConfig, updateServer } from "./mcp-store";
import { StoredOAuthProvider } from "./stored-oauth-provider";

/** What the server's 401 says about where its authorization lives, if it answers one. */
async function probe(row: McpServerRow, fetchFn: FetchLike): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const { LATEST_PROTOCOL_VERSION, extractWWWAuthenticateParams } = await loadMcpClientSdk();
  const response = await fetchFn(row.server_url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "tandem", version: "1" } },
    }),
  });
  await response.body?.cancel().catch(() => {});
  if (response.status < 400) {
    throw new ApiError(409, "authorization_not_needed", "the tool server answers without authorization; refresh it instead");
  }
  if (response.status !== 401) return {};
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return { resourceMetadataUrl, scope };
}

function authorizationFailed(error: unknown): ApiError {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof AddressRefused) return new ApiError(400, "address_refused", `refused: ${message}`);
  return new ApiError(502, "authorization_failed", `the tool server's authorization could not be started: ${message.slice(0, 300)}`);
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** Whether a URL's host is this machine, as the browser that opens it reads the name. */
function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare.endsWith(".localhost")) return true;
  const family = isIP(bare);
  return family !== 0 && loopback.check(bare, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Why the authorization URL a remote server's metadata led to may not be handed to the user's
 * browser, or undefined when it may: it must be https, or http to this machine when the operator
 * allows private tool servers (`TANDEM_ALLOW_PRIVATE_TOOL_SERVERS`, a tool server beside Tandem).
 * The metadata is the remote server's to write, and the SDK only refuses `javascript:`, `data:` and
 * `vbscript:`: a `file:` URL, or plain http across the network, would otherwise reach the client.
 */
export function authorizationUrlRefusal(url: URL, allowPrivate: boolean): string | undefined {
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && allowPrivate && isLoopbackHost(url.hostname)) return undefined;
  const allowed = allowPrivate ? "https (or http to this machine)" : "https";
  return `its authorization URL uses ${url.protocol.slice(0, 20)} and only ${allowed} is accepted`;
}

/** Starts an authorization: the URL the user opens and its state. */
export async function startAuthorization(app: AppContext, row: McpServerRow, callbackUrl: string) {
  const { scope } = serverConfig(row);
  const provider = new StoredOAuthProvider(app, row.id, callbackUrl, "interactive", scope);
  let result: Awaited<ReturnType<McpClientSdk["auth"]>>;
  // Discovery and registration are several requests: together they get the time of one call.
  const fetchFn = remoteFetch(app, AbortSignal.timeout(app.config.toolServerTimeoutMs));
  try {
    const found = await probe(row, fetchFn);
    const { auth } = await loadMcpClientSdk();
    result = await auth(provider, {
      serverUrl: row.server_url,
      resourceMetadataUrl: found.resourceMetadataUrl,
      scope: scope ?? found.scope,
      fetchFn,
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw authorizationFailed(error);
  }
  if (result !== "REDIRECT" || !provider.authorizationUrl || !provider.issuedState) {
    throw new ApiError(502, "authorization_failed", "the tool server's authorization server gave no authorization URL");
  }
  const refusal = authorizationUrlRefusal(provider.authorizationUrl, app.config.allowPrivateToolServers);
  if (refusal) {
    // Nothing stays pending: the state and the PKCE verifier the SDK just stored go again.
    await updateServer(app.db, row.id, { oauth_state_hash: null, oauth_state_expires_at: null, oauth_verifier: null }, app.clock.now());
    throw new ApiError(502, "authorization_failed", `the tool server's authorization server is refused: ${refusal}`);
  }
  const stored = await app.db.selectFrom("mcp_servers").select("oauth_state_expires_at").where("id", "=", row.id).executeTakeFirstOrThrow();
  return {
    authorizeUrl: provider.authorizationUrl.toString(),
    state: provider.issuedState,
    expiresAt: stored.oauth_state_expires_at as string,
  };
}

export type CallbackOutcome = { ok: true; server: McpServerRow } | { ok: false; status: number; message: string };

const SPENT_MESSAGE = "This authorization link has expired or was already used. Start again from Tandem.";

/**
 * The server whose authorization a state names, while it is pending: unspent and younger than
 * 10 minutes. Spends nothing: the callback may first ask the browser to confirm.
 */
export async function pendingAuthorization(app: AppContext, state: string | undefined): Promise<McpServerRow | undefined> {
  if (!state) return undefined;
  const row = await app.db.selectFrom("mcp_servers").selectAll().where("oauth_state_hash", "=", hashState(state)).executeTakeFirst();
  if (!row?.oauth_state_expires_at || row.oauth_state_expires_at <= app.clock.now().toISOString()) return undefined;
  return row;
}

/** Spends a state, once: of two requests racing on one state, one updates the row and gets true. */
async function spendState(app: AppContext, row: McpServerRow, state: string): Promise<boolean> {
  const spent = await app.db
    .updateTable("mcp_servers")
    .set({ oauth_state_hash: null, oauth_state_expires_at: null })
    .where("id", "=", row.id)
    .where("oauth_state_hash", "=", hashState(state))
    .where("oauth_state_expires_at", ">", app.clock.now().toISOString())
    .executeTakeFirst();
  return Number(spent.numUpdatedRows ?? 0) === 1;
}

/** Ends a pending authorization without storing anything: the state is spent and the PKCE verifier dropped. */
export async function abandonAuthorization(app: AppContext, row: McpServerRow, state: string): Promise<boolean> {
  if (!(await spendState(app, row, state))) return false;
  await updateServer(app.db, row.id, { oauth_verifier: null }, app.clock.now());
  return true;
}

/** What the confirmation form must echo: bound to the state by a server secret, so no other page can make it. */
export const confirmationToken = (app: AppContext, state: string) => app.secrets.mac(state, "mcp.oauth.confirm");

/**
 * Completes a pending authorization, once the caller knows the browser is its owner's (a web
 * session of the owner, or the owner's confirmation): the state is spent here, whatever follows;
 * the code is exchanged, with the stored PKCE verifier, for tokens that are stored sealed; then
 * the server's tools are listed.
 */
export async function completeAuthorization(
  app: AppContext,
  row: McpServerRow,
  answer: { state: string; code?: string; error?: string; error_description?: string },
  callbackUrl: string,
): Promise<CallbackOutcome> {
  if (!(await spendState(app, row, answer.state))) return { ok: false, status: 400, message: SPENT_MESSAGE };
  if (answer.error || !answer.code) {
    await updateServer(app.db, row.id, { oauth_verifier: null }, app.clock.now());
    const reason = answer.error ? `${answer.error}${answer.error_description ? `: ${answer.error_description}` : ""}` : "no code was given";
    return { ok: false, status: 400, message: `The authorization was not given (${reason.slice(0, 300)}).` };
  }
  const { scope } = serverConfig(row);
  const provider = new StoredOAuthProvider(app, row.id, callbackUrl, "interactive", scope);
  try {
    const fetchFn = remoteFetch(app, AbortSignal.timeout(app.config.toolServerTimeoutMs));
    const { auth } = await loadMcpClientSdk();
    await auth(provider, { serverUrl: row.server_url, authorizationCode: answer.code, scope, fetchFn });
  } catch (error) {
    await updateServer(app.db, row.id, { oauth_verifier: null }, app.clock.now());
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, status: 502, message: `The authorization server refused the code (${message.slice(0, 300)}).` };
  }
  await updateServer(app.db, row.id, { oauth_verifier: null }, app.clock.now());
  const fresh = await app.db.selectFrom("mcp_servers").selectAll().where("id", "=", row.id).executeTakeFirstOrThrow();
  return { ok: true, server: await refreshServer(app, fresh) };
}

/** The answer to a callback whose state names no pending authorization. */
export const spentOutcome = (state: string | undefined): CallbackOutcome => ({
  ok: false,
  status: 400,
  message: state ? SPENT_MESSAGE : "The authorization answer carries no state.",
});

/**
 * Asks the authorization server to revoke the stored tokens (RFC 7009), when it has a revocation
 * endpoint. Best effort, bounded by the tool-server timeout: the tokens are dropped here whatever
 * it answers.
 */
export async function revokeStoredAuthorization(app: AppContext, row: McpServerRow): Promise<void> {
  // From the row as it was: the caller has usually dropped them from storage already.
  const tokens = openSealed<OAuthTokens>(app.secrets, row.oauth_tokens, SEALED.tokens, row.id);
  const client = openSealed<OAuthClientInformationMixed>(app.secrets, row.oauth_client, SEALED.client, row.id);
  if (!tokens || !client) return;
  const signal = AbortSignal.timeout(app.config.toolServerTimeoutMs);
  const fetchFn = remoteFetch(app, signal);
  try {
    const { discoverOAuthServerInfo } = await loadMcpClientSdk();
    const info = await discoverOAuthServerInfo(row.server_url, { fetchFn });
    // OAuth metadata (RFC 8414) names it; the SDK's type of OpenID metadata does not.
    const endpoint = (info.authorizationServerMetadata as { revocation_endpoint?: string } | undefined)?.revocation_endpoint;
    if (!endpoint) return;
    for (const [token, hint] of [
      [tokens.refresh_token, "refresh_token"],
      [tokens.access_token, "access_token"],
    ] as const) {
      if (!token) continue;
      const body = new URLSearchParams({ token, token_type_hint: hint, client_id: client.client_id });
      if (client.client_secret) body.set("client_secret", client.client_secret);
      const answer = await fetchFn(endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body,
        signal,
      });
      await answer.body?.cancel().catch(() => {});
    }
  } catch (error) {
    app.logger.info({ err: error, server: row.id }, "the tool server's authorization server did not revoke its tokens");
  }
}
