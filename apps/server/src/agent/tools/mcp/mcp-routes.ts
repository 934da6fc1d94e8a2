import { API_BASE_PATH } from "@tandem/core";
import type { Request } from "express";
import type { AppContext } from "../../../context";
import { ApiError, badRequest } from "../../../http/errors";
import { created } from "../../../http/reply";
import { HANDLED, type RouteHandlers } from "../../../http/router";
import { newId } from "../../../ids";
import { NATIVE_TOOLS } from "../registry";
import { AddressRefused, vettedAddresses } from "./address-guard";
import { completeAuthorization, revokeStoredAuthorization, startAuthorization } from "./mcp-authorize";
import { refreshServer } from "./mcp-connection";
import { type McpServerConfig, ownedServer, serverView, updateServer } from "./mcp-store";

type McpRouteId =
  | "listMcpServers"
  | "addMcpServer"
  | "getMcpServer"
  | "updateMcpServer"
  | "deleteMcpServer"
  | "authorizeMcpServer"
  | "mcpOAuthCallback"
  | "refreshMcpServer"
  | "disconnectMcpServer";

const NATIVE_NAMESPACES = new Set(NATIVE_TOOLS.map((tool) => tool.namespace));
/** Remote tool servers one user may add. */
export const MAX_SERVERS_PER_USER = 50;

/** Where the browser comes back: the configured public URL, else the origin the caller used. */
function callbackUrl(app: AppContext, req: Request): string {
  const origin = app.config.publicUrl?.replace(/\/+$/, "") ?? `${req.protocol}://${req.get("host")}`;
  return `${origin}${API_BASE_PATH}/tools/mcp/oauth/callback`;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

function callbackPage(title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body></html>`;
}

/** Refused before anything is stored when the URL's host is private (the check runs again on every connection). */
async function checkAddress(app: AppContext, serverUrl: string): Promise<void> {
  if (app.config.allowPrivateToolServers) return;
  try {
    await vettedAddresses(new URL(serverUrl).hostname);
  } catch (error) {
    if (error instanceof AddressRefused) {
      if (error.reason === "unresolvable") throw badRequest("address_refused", error.message);
      throw badRequest("address_refused", `${error.message}; an operator may allow this with TANDEM_ALLOW_PRIVATE_TOOL_SERVERS=1`);
    }
    throw error;
  }
}

async function checkName(app: AppContext, ownerId: number, name: string, exceptId?: string): Promise<void> {
  if (NATIVE_NAMESPACES.has(name)) throw new ApiError(409, "name_taken", `"${name}" is a namespace of Tandem's own tools`);
  const clash = await app.db
    .selectFrom("mcp_servers")
    .select("id")
    .where("owner_id", "=", ownerId)
    .where("name", "=", name)
    .executeTakeFirst();
  if (clash && clash.id !== exceptId) throw new ApiError(409, "name_taken", `you already have a tool server named "${name}"`);
}

export function mcpHandlers(app: AppContext): RouteHandlers<McpRouteId> {
  const { db, clock } = app;
  const view = async (ownerId: number, id: string) => ({ success: true, server: serverView(await ownedServer(db, ownerId, id)) });

  return {
    listMcpServers: async ({ principal }) => {
      const rows = await db.selectFrom("mcp_servers").selectAll().where("owner_id", "=", principal.userId).orderBy("created_at").execute();
      return { success: true, servers: rows.map(serverView) };
    },

    addMcpServer: async ({ input, principal, res }) => {
      const { name, serverUrl, config } = input.body;
      await checkName(app, principal.userId, name);
      const { count } = await db
        .selectFrom("mcp_servers")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("owner_id", "=", principal.userId)
        .executeTakeFirstOrThrow();
      if (Number(count) >= MAX_SERVERS_PER_USER) {
        throw new ApiError(409, "too_many_servers", `you have ${MAX_SERVERS_PER_USER} tool servers already; remove one first`);
      }
      await checkAddress(app, serverUrl);
      const now = clock.now().toISOString();
      const id = newId("mcp");
      try {
        await db
          .insertInto("mcp_servers")
          .values({
            id,
            owner_id: principal.userId,
            name,
            server_url: serverUrl,
            config: JSON.stringify(config satisfies McpServerConfig),
            status: "disconnected",
            error: null,
            tools: "[]",
            created_at: now,
            updated_at: now,
          })
          .execute();
      } catch (error) {
        // Two adds of one name racing: the unique constraint decides.
        await checkName(app, principal.userId, name);
        throw error;
      }
      const controller = new AbortController();
      res.on("close", () => controller.abort());
      const row = await refreshServer(app, await ownedServer(db, principal.userId, id), controller.signal);
      return created({ success: true, server: serverView(row) });
    },

    getMcpServer: async ({ input, principal }) => view(principal.userId, input.params.id),

    updateMcpServer: async ({ input, principal }) => {
      const row = await ownedServer(db, principal.userId, input.params.id);
      const { name, serverUrl, config } = input.body;
      if (name !== undefined && name !== row.name) await checkName(app, principal.userId, name, row.id);
      if (serverUrl !== undefined) await checkAddress(app, serverUrl);
      const moved = serverUrl !== undefined && serverUrl !== row.server_url;
      await updateServer(
        db,
        row.id,
        {
          ...(name !== undefined ? { name } : {}),
          ...(config !== undefined ? { config: JSON.stringify(config) } : {}),
          // An authorization is for one server: a new URL starts without it.
          ...(moved
            ? {
                server_url: serverUrl,
                status: "disconnected" as const,
                tools: "[]",
                error: null,
                oauth_client: null,
                oauth_tokens: null,
                oauth_verifier: null,
                oauth_state_hash: null,
                oauth_state_expires_at: null,
              }
            : {}),
        },
        clock.now(),
      );
      const updated = await ownedServer(db, principal.userId, row.id);
      return { success: true, server: serverView(moved || config !== undefined ? await refreshServer(app, updated) : updated) };
    },

    deleteMcpServer: async ({ input, principal }) => {
      const row = await ownedServer(db, principal.userId, input.params.id);
      await db.deleteFrom("mcp_servers").where("id", "=", row.id).where("owner_id", "=", principal.userId).execute();
      await revokeStoredAuthorization(app, row);
      return { success: true };
    },

    authorizeMcpServer: async ({ input, principal, req }) => {
      const row = await ownedServer(db, principal.userId, input.params.id);
      return { success: true, ...(await startAuthorization(app, row, callbackUrl(app, req))) };
    },

    mcpOAuthCallback: async ({ input, req, res }) => {
      const outcome = await completeAuthorization(app, input.query, callbackUrl(app, req));
      const page = outcome.ok
        ? callbackPage(
            outcome.server.status === "connected" ? `${outcome.server.name} is connected` : `${outcome.server.name} is authorized`,
            outcome.server.status === "connected"
              ? "Tandem can now use its tools. You can close this window."
              : `Tandem stored the authorization, but the server answered: ${outcome.server.error ?? outcome.server.status}`,
          )
        : callbackPage("Authorization failed", outcome.message);
      res
        .status(outcome.ok ? 200 : outcome.status)
        // The URL carried a code: no cache, no referrer; the page runs nothing.
        .set({
          "Content-Type": "text/html; charset=utf-8",
          "Cache-Control": "no-store",
          "Referrer-Policy": "no-referrer",
          "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
          "X-Content-Type-Options": "nosniff",
        })
        .send(page);
      return HANDLED;
    },

    refreshMcpServer: async ({ input, principal, res }) => {
      const row = await ownedServer(db, principal.userId, input.params.id);
      const controller = new AbortController();
      res.on("close", () => controller.abort());
      return { success: true, server: serverView(await refreshServer(app, row, controller.signal)) };
    },

    disconnectMcpServer: async ({ input, principal }) => {
      const row = await ownedServer(db, principal.userId, input.params.id);
      // Dropped here first, so the tools leave at once whatever the authorization server does.
      await updateServer(
        db,
        row.id,
        {
          status: "disconnected",
          error: null,
          tools: "[]",
          oauth_client: null,
          oauth_tokens: null,
          oauth_verifier: null,
          oauth_state_hash: null,
          oauth_state_expires_at: null,
        },
        clock.now(),
      );
      await revokeStoredAuthorization(app, row);
      return view(principal.userId, row.id);
    },
  };
}
