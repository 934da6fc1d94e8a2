import { API_BASE_PATH, type RouteDefinition, routes } from "@tandem/core";
import express, { type Request, type Response, type Router } from "express";
import type { AppContext } from "../../../context";
import { ApiError } from "../../../http/errors";
import { created } from "../../../http/reply";
import { HANDLED, type RouteHandlers } from "../../../http/router";
import { newId } from "../../../ids";
import { confirmToolServerPage, messagePage, type Page } from "../../../oauth/pages";
import { sameToken, type WebSession, WebSessions } from "../../../oauth/web-session";
import { NATIVE_TOOLS } from "../registry";
import { refuseUnsafeUrl } from "./address-guard";
import {
  abandonAuthorization,
  type CallbackOutcome,
  completeAuthorization,
  confirmationToken,
  pendingAuthorization,
  revokeStoredAuthorization,
  spentOutcome,
  startAuthorization,
} from "./mcp-authorize";
import { refreshServer } from "./mcp-connection";
import { type McpServerConfig, type McpServerRow, ownedServer, serverView, updateServer } from "./mcp-store";

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

const CALLBACK_PATH = `${API_BASE_PATH}/tools/mcp/oauth/callback`;

/** The callback's pages: no cache, no referrer (the URL carried a code), nothing runs. */
function sendPage(res: Response, page: Page): void {
  res.status(page.status).set(page.headers).send(page.html);
}

function outcomePage(outcome: CallbackOutcome): Page {
  if (!outcome.ok) return messagePage(outcome.status, "Authorization failed", outcome.message);
  const { server } = outcome;
  return server.status === "connected"
    ? messagePage(200, `${server.name} is connected`, "Tandem can now use its tools. You can close this window.")
    : messagePage(
        200,
        `${server.name} is authorized`,
        `Tandem stored the authorization, but the server answered: ${server.error ?? server.status}`,
      );
}

/** A browser signed in to Tandem as someone else than the one who started: refused, and the state spent. */
async function refuseOtherAccount(app: AppContext, row: McpServerRow, state: string, session: WebSession): Promise<Page> {
  await abandonAuthorization(app, row, state);
  return messagePage(
    403,
    "Not your authorization",
    `This authorization was started by another Tandem account than the one this browser is signed in to (${session.username}). Nothing was stored. If you meant to connect this server, start again from Tandem.`,
  );
}

/**
 * The confirmation form's answer (an HTML form, so not a JSON route of the v1 API): Connect
 * completes the pending authorization, Cancel spends it and stores nothing.
 */
export function mcpCallbackFormRouter(app: AppContext): Router {
  // The app runs the route table's exact routes before this router: a POST declared at this path
  // would be answered there and never reach the form.
  if (
    Object.values(routes).some((route: RouteDefinition) => route.method === "POST" && `${API_BASE_PATH}${route.path}` === CALLBACK_PATH)
  ) {
    throw new Error(`the route table declares POST ${CALLBACK_PATH}, which the confirmation form answers`);
  }
  const sessions = new WebSessions(app.db, app.config.publicUrl?.startsWith("https:") ?? false);
  const form = express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 10 });
  const field = (req: Request, name: string, max: number) => {
    const value = (req.body as Record<string, unknown> | undefined)?.[name];
    return typeof value === "string" && value.length <= max ? value : "";
  };
  const router = express.Router();
  router.post(CALLBACK_PATH, form, (req, res, next) => {
    (async () => {
      const state = field(req, "state", 200);
      const code = field(req, "code", 2000);
      const row = await pendingAuthorization(app, state);
      if (!row) return sendPage(res, outcomePage(spentOutcome(state)));
      // Bound to the state by a server secret: only the page this server showed can post it.
      if (!sameToken(field(req, "csrf", 200), confirmationToken(app, state))) {
        return sendPage(
          res,
          messagePage(403, "Authorization failed", "The form did not come from Tandem's confirmation page. Nothing was stored."),
        );
      }
      const session = await sessions.find(req);
      if (session && session.userId !== row.owner_id) return sendPage(res, await refuseOtherAccount(app, row, state, session));
      const decision = field(req, "decision", 20);
      if (decision === "cancel") {
        const cancelled = await abandonAuthorization(app, row, state);
        return sendPage(
          res,
          cancelled
            ? messagePage(200, "Not connected", `Nothing was stored: ${row.name} is not connected to Tandem. You can close this window.`)
            : outcomePage(spentOutcome(state)),
        );
      }
      if (decision !== "connect" || !code) return sendPage(res, messagePage(400, "Authorization failed", "Choose Connect or Cancel."));
      sendPage(res, outcomePage(await completeAuthorization(app, row, { state, code }, callbackUrl(app, req))));
    })().catch(next);
  });
  return router;
}

/** Refused before anything is stored when the URL's host is private (the check runs again on every connection). */
function checkAddress(app: AppContext, serverUrl: string): Promise<void> {
  return refuseUnsafeUrl(serverUrl, app.config.allowPrivateToolServers, "TANDEM_ALLOW_PRIVATE_TOOL_SERVERS");
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
  const webSessions = new WebSessions(db, app.config.publicUrl?.startsWith("https:") ?? false);
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
      const { state, code, error, error_description } = input.query;
      const row = await pendingAuthorization(app, state);
      if (!row || !state) {
        sendPage(res, outcomePage(spentOutcome(state)));
        return HANDLED;
      }
      // A refusal or a missing code stores nothing, whoever the browser is: it ends the attempt.
      if (error || !code) {
        sendPage(res, outcomePage(await completeAuthorization(app, row, { state, error, error_description }, callbackUrl(app, req))));
        return HANDLED;
      }
      // The state names the owner, not the browser: someone may have sent their own authorize
      // link to another person, to collect that person's approval. So the code is exchanged at
      // once only in a browser signed in to Tandem as the owner; a browser signed in as someone
      // else is refused; a browser not signed in is asked to confirm, naming the account.
      const session = await webSessions.find(req);
      if (session && session.userId !== row.owner_id) {
        sendPage(res, await refuseOtherAccount(app, row, state, session));
      } else if (session) {
        sendPage(res, outcomePage(await completeAuthorization(app, row, { state, code }, callbackUrl(app, req))));
      } else {
        const owner = await db.selectFrom("users").select(["username", "name"]).where("id", "=", row.owner_id).executeTakeFirstOrThrow();
        sendPage(
          res,
          confirmToolServerPage({
            action: CALLBACK_PATH,
            state,
            code,
            csrf: confirmationToken(app, state),
            username: owner.username,
            displayName: owner.name,
            serverName: row.name,
            serverUrl: row.server_url,
          }),
        );
      }
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
