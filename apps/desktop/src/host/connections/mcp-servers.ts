import { z } from "zod";
import type { McpAuthorization, McpServerItem } from "../../shared/desktop-api";
import type { ConnectionsFacet } from "../facets";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";
import { statusWords } from "./connection-status";
import { connectionsCall, isObjectMissing, isRouteMissing, MCP_UNSUPPORTED, readAnswer, webAddress } from "./connections-call";
import { requestServer, segment } from "./server-request";

/**
 * The remote tool server routes (spec: `/tools/mcp*`), in one place: core's typed client does not
 * declare them yet, so these paths are the only thing to adjust if the server's names change.
 */
export const MCP_PATHS = {
  list: "/tools/mcp",
  add: "/tools/mcp",
  one: (id: string) => `/tools/mcp/${segment(id)}`,
  authorize: (id: string) => `/tools/mcp/${segment(id)}/authorize`,
  refresh: (id: string) => `/tools/mcp/${segment(id)}/refresh`,
  disconnect: (id: string) => `/tools/mcp/${segment(id)}/disconnect`,
} as const;

/** Adding, refreshing and signing in make the server contact the remote one, which may be slow. */
const REMOTE_TIMEOUT_MS = 45_000;
/** A remote server's tool list is shown, not kept whole: a description past this is cut. */
const TOOL_DESCRIPTION_MAX = 500;
const TOOLS_SHOWN_MAX = 200;

// Lenient on purpose: fields this view does not use may come and go without breaking it.
const ServerAnswerShape = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  name: z.string(),
  serverUrl: z.string(),
  status: z.string(),
  error: z.string().nullable().optional(),
  authorized: z.boolean().optional(),
  toolCount: z.number().int().nonnegative().optional(),
  tools: z
    .array(
      z.object({
        name: z.string(),
        description: z.string().optional().default(""),
        readWrite: z.enum(["read", "write"]).catch("write"),
      }),
    )
    .optional()
    .default([]),
  lastCheckedAt: z.string().nullable().optional(),
});
const ServerList = z.object({ servers: z.array(ServerAnswerShape) });
const OneServer = z.object({ server: ServerAnswerShape });
const Authorization = z.object({ authorizeUrl: z.string(), expiresAt: z.string().nullable().optional() });

// The spec's bounds (core's on the server): lower-case name, its tools' namespace; an http(s) URL.
const NameInput = z
  .string()
  .trim()
  .min(1, { error: "Give it a name" })
  .max(64, { error: "The name is at most 64 characters" })
  .regex(/^[a-z0-9][a-z0-9_-]*$/, { error: "The name takes lower-case letters, digits, - and _, starting with a letter or digit" });
const UrlInput = z
  .string()
  .trim()
  .max(2000, { error: "The address is too long" })
  .refine(webAddress, { error: "The address must start with https:// (or http://)" });
const AddInput = z.object({ name: NameInput, serverUrl: UrlInput });
const UpdateInput = z.object({ id: z.string().min(1).max(200), name: NameInput.optional(), serverUrl: UrlInput.optional() });
const IdInput = z.object({ id: z.string().min(1).max(200) });

export function mcpServerItem(server: z.output<typeof ServerAnswerShape>): McpServerItem {
  return {
    id: server.id,
    name: server.name,
    serverUrl: server.serverUrl,
    state: statusWords(server.status, server.error),
    authorized: server.authorized ?? server.status === "connected",
    toolCount: server.toolCount ?? server.tools.length,
    tools: server.tools.slice(0, TOOLS_SHOWN_MAX).map((tool) => ({
      name: tool.name,
      description:
        tool.description.length > TOOL_DESCRIPTION_MAX ? `${tool.description.slice(0, TOOL_DESCRIPTION_MAX)}…` : tool.description,
      readWrite: tool.readWrite,
    })),
    lastCheckedAt: server.lastCheckedAt ?? null,
  };
}

/** `GET /tools/mcp`'s answer; exported for the tests. */
export function readServerList(answer: unknown): McpServerItem[] {
  return readAnswer(ServerList, answer, "remote tool servers").servers.map(mcpServerItem);
}

export function readServer(answer: unknown): McpServerItem {
  return mcpServerItem(readAnswer(OneServer, answer, "the remote tool server").server);
}

/** The sign-in address to open; anything but a web address is refused, whoever chose it. */
export function readAuthorization(answer: unknown): McpAuthorization {
  const { authorizeUrl, expiresAt } = readAnswer(Authorization, answer, "signing in to the remote tool server");
  if (!webAddress(authorizeUrl))
    throw new Error("The remote tool server gave a sign-in address that is not a web page; it was not opened.");
  return { authorizeUrl, expiresAt: expiresAt ?? null };
}

/** A 404 on one server: it was removed meanwhile (another device, say), or the server has no such routes. */
function serverGone<T>(request: () => Promise<T>): Promise<T> {
  return connectionsCall(request).catch((error: unknown) => {
    if (isRouteMissing(error)) throw new Error(MCP_UNSUPPORTED, { cause: error });
    if (isObjectMissing(error)) {
      throw new Error("This remote tool server is no longer there; it may have been removed elsewhere.", { cause: error });
    }
    throw error;
  });
}

export function createMcpServerMethods(
  session: SessionService,
): Pick<
  ConnectionsFacet,
  | "listMcpServers"
  | "addMcpServer"
  | "updateMcpServer"
  | "authorizeMcpServer"
  | "refreshMcpServer"
  | "disconnectMcpServer"
  | "removeMcpServer"
> {
  const signedIn = () => {
    const credentials = session.credentials();
    if (!credentials) throw new Error("Sign in first");
    return credentials;
  };
  return {
    async listMcpServers() {
      const credentials = signedIn();
      try {
        return { supported: true, servers: readServerList(await connectionsCall(() => requestServer(credentials, "GET", MCP_PATHS.list))) };
      } catch (error) {
        if (isRouteMissing(error)) return { supported: false, servers: [] };
        throw error;
      }
    },

    async addMcpServer(input) {
      const body = parseInput("addMcpServer", AddInput, input);
      const credentials = signedIn();
      const answer = await connectionsCall(() =>
        requestServer(credentials, "POST", MCP_PATHS.add, { ...body, config: {} }, REMOTE_TIMEOUT_MS),
      ).catch((error: unknown) => {
        if (isRouteMissing(error)) throw new Error(MCP_UNSUPPORTED, { cause: error });
        throw error;
      });
      return readServer(answer);
    },

    async updateMcpServer(input) {
      const { id, ...change } = parseInput("updateMcpServer", UpdateInput, input);
      const credentials = signedIn();
      return readServer(await serverGone(() => requestServer(credentials, "PATCH", MCP_PATHS.one(id), change, REMOTE_TIMEOUT_MS)));
    },

    async authorizeMcpServer(input) {
      const { id } = parseInput("authorizeMcpServer", IdInput, input);
      const credentials = signedIn();
      return readAuthorization(await serverGone(() => requestServer(credentials, "POST", MCP_PATHS.authorize(id), {}, REMOTE_TIMEOUT_MS)));
    },

    async refreshMcpServer(input) {
      const { id } = parseInput("refreshMcpServer", IdInput, input);
      const credentials = signedIn();
      return readServer(await serverGone(() => requestServer(credentials, "POST", MCP_PATHS.refresh(id), {}, REMOTE_TIMEOUT_MS)));
    },

    async disconnectMcpServer(input) {
      const { id } = parseInput("disconnectMcpServer", IdInput, input);
      const credentials = signedIn();
      return readServer(await serverGone(() => requestServer(credentials, "POST", MCP_PATHS.disconnect(id), {})));
    },

    async removeMcpServer(input) {
      const { id } = parseInput("removeMcpServer", IdInput, input);
      const credentials = signedIn();
      await serverGone(() => requestServer(credentials, "DELETE", MCP_PATHS.one(id)));
    },
  };
}
