import { z } from "zod";
import type { McpAuthorization, McpServerItem } from "../../shared/desktop-api";
import type { ConnectionsFacet } from "../facets";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";
import { serverClient } from "../session/server-client";
import { statusWords } from "./connection-status";
import {
  connectionsCall,
  isObjectMissing,
  isRouteMissing,
  lacksScope,
  MCP_NOT_ALLOWED,
  MCP_UNSUPPORTED,
  readAnswer,
  webAddress,
} from "./connections-call";

/** Adding, refreshing and signing in make the server contact the remote one, which may be slow. */
const REMOTE_TIMEOUT_MS = 45_000;
/** A remote server's tool list is shown, not kept whole: a description past this is cut. */
const TOOL_DESCRIPTION_MAX = 500;
const TOOLS_SHOWN_MAX = 200;

// Core's `McpServer` (`GET /tools/mcp`), read leniently on purpose: the answers are not validated
// against core's schema, and fields this view does not use may come and go without breaking it.
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
// `POST /tools/mcp/:id/authorize`: `{authorizeUrl, state, expiresAt}`; the state stays in the URL, the server checks it.
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
    const client = session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  /** Adding, refreshing and signing in make the server contact the remote one: these calls wait longer. */
  const patient = () => {
    const credentials = session.credentials();
    if (!credentials) throw new Error("Sign in first");
    return serverClient(credentials.serverUrl, credentials.apiKey, false, REMOTE_TIMEOUT_MS);
  };
  return {
    async listMcpServers() {
      const client = signedIn();
      try {
        return { supported: true, servers: readServerList(await connectionsCall(() => client.call("listMcpServers"))) };
      } catch (error) {
        if (isRouteMissing(error)) return { supported: false, servers: [] };
        // A sign-in by pairing code has no os.tools scopes, by design: said as a fact, not as a failure.
        if (lacksScope(error)) return { supported: true, servers: [], notAllowed: MCP_NOT_ALLOWED };
        throw error;
      }
    },

    async addMcpServer(input) {
      const body = parseInput("addMcpServer", AddInput, input);
      const client = patient();
      const answer = await connectionsCall(() => client.call("addMcpServer", { body })).catch((error: unknown) => {
        if (isRouteMissing(error)) throw new Error(MCP_UNSUPPORTED, { cause: error });
        throw error;
      });
      return readServer(answer);
    },

    async updateMcpServer(input) {
      const { id, ...change } = parseInput("updateMcpServer", UpdateInput, input);
      const client = patient();
      return readServer(await serverGone(() => client.call("updateMcpServer", { params: { id }, body: change })));
    },

    async authorizeMcpServer(input) {
      const { id } = parseInput("authorizeMcpServer", IdInput, input);
      const client = patient();
      return readAuthorization(await serverGone(() => client.call("authorizeMcpServer", { params: { id } })));
    },

    async refreshMcpServer(input) {
      const { id } = parseInput("refreshMcpServer", IdInput, input);
      const client = patient();
      return readServer(await serverGone(() => client.call("refreshMcpServer", { params: { id } })));
    },

    async disconnectMcpServer(input) {
      const { id } = parseInput("disconnectMcpServer", IdInput, input);
      const client = signedIn();
      return readServer(await serverGone(() => client.call("disconnectMcpServer", { params: { id } })));
    },

    async removeMcpServer(input) {
      const { id } = parseInput("removeMcpServer", IdInput, input);
      const client = signedIn();
      await serverGone(() => client.call("deleteMcpServer", { params: { id } }));
    },
  };
}
