import { z } from "zod";
import { RunProgressLines, TokenUsage } from "./agent";
import { IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** A managed agent's handle: what `POST /agent/message {to}` and `/a2a/<handle>` take. Never a username, never `*_coo`. */
export const MANAGED_AGENT_HANDLE = /^[a-z][a-z0-9-]{1,31}$/;

/** Words no agent may take as its handle: they name parts of the product or would mislead. */
export const RESERVED_AGENT_HANDLES: ReadonlySet<string> = new Set([
  "admin",
  "administrator",
  "agent",
  "agents",
  "all",
  "anonymous",
  "api",
  "a2a",
  "coo",
  "everyone",
  "group",
  "groups",
  "guest",
  "help",
  "mcp",
  "me",
  "net",
  "null",
  "oauth",
  "owner",
  "root",
  "security",
  "server",
  "support",
  "system",
  "tandem",
  "undefined",
  "well-known",
]);

export const MAX_AGENT_INSTRUCTIONS_CHARS = 20_000;
export const MAX_AGENT_RUN_INPUT_CHARS = 32_000;

export const ToolPolicyDecision = z.enum(["allow", "ask", "deny"]);

const ToolPolicy = z
  .record(z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, { error: "tool names are letters, digits, '_', '.' or '-'" }), ToolPolicyDecision)
  .refine((policy) => Object.keys(policy).length <= 200, { error: "at most 200 tools" })
  .describe(
    "per tool (by name): allow runs it, deny removes it, ask pauses the run for the owner (an escalation); unnamed tools are allowed",
  );

export const ManagedAgentGrant = z.object({
  notesAccess: z
    .object({
      scope: z.enum(["none", "folders", "all"]),
      folderIds: z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)).max(200).default([]),
      access: z.enum(["read", "write"]).default("read"),
    })
    .default({ scope: "none", folderIds: [], access: "read" })
    .describe("the owner's notes it may reach: none, some folders (with their subfolders) or all its owner's own folders; never Memory"),
  todoAccess: z.object({ read: z.boolean().default(false), create: z.boolean().default(false) }).default({ read: false, create: false }),
});
export type ManagedAgentGrant = z.output<typeof ManagedAgentGrant>;

const Handle = z
  .string()
  .regex(MANAGED_AGENT_HANDLE, { error: "must be 2 to 32 lowercase letters, digits or '-', starting with a letter" });
const Namespaces = z
  .array(z.string().regex(/^[a-z0-9_-]{1,64}$/))
  .max(50)
  .describe("the tool namespaces it may use (notes, todos); its grant still decides which tools exist");

export const ManagedAgent = z.object({
  id: z.number().int(),
  handle: z.string(),
  name: z.string(),
  description: z.string(),
  instructions: z.string(),
  model: z.string().describe("a model alias (default, fast, smart, local)"),
  namespaces: z.array(z.string()),
  grant: ManagedAgentGrant,
  toolPolicy: z.record(z.string(), ToolPolicyDecision),
  status: z.enum(["active", "paused"]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ManagedAgentKey = z.object({
  keyId: z.string(),
  label: z.string().nullable(),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
  revokedAt: Timestamp.nullable(),
});

export const MANAGED_AGENT_RUN_STATUSES = ["running", "requires_action", "completed", "failed", "stopped"] as const;

export const ManagedAgentRun = z.object({
  id: z.number().int(),
  agentId: z.number().int(),
  source: z.enum(["runs", "agent_message", "a2a"]).describe("how it was reached"),
  callerUserId: z
    .number()
    .int()
    .nullable()
    .describe("the person whose agent asked (agent_message, a2a); null for the owner or the agent's key"),
  status: z.enum(MANAGED_AGENT_RUN_STATUSES),
  input: z.string(),
  output: z.string(),
  toolsUsed: z.array(z.string()),
  usage: TokenUsage,
  model: z.string(),
  error: z.string().nullable(),
  createdAt: Timestamp,
  finishedAt: Timestamp.nullable(),
});

/** One line of a run's stream: the chat stream's lines, with the run's id where chat has a conversation's. */
export const ManagedAgentRunStreamLine = z.discriminatedUnion("type", [
  z.object({ type: z.literal("run-start"), runId: z.number().int() }),
  ...RunProgressLines,
  z.object({
    type: z.literal("completion"),
    runId: z.number().int(),
    status: z.enum(MANAGED_AGENT_RUN_STATUSES),
    toolsUsed: z.array(z.string()),
    metadata: TokenUsage.extend({ model: z.string(), modelId: z.string() }),
  }),
]);

const AgentId = z.object({ id: IdParam });
const KeyLabel = z.string().trim().min(1).max(100);

const AgentFields = {
  name: z.string().trim().min(1).max(100),
  description: z.string().max(1000),
  instructions: z.string().max(MAX_AGENT_INSTRUCTIONS_CHARS),
  model: z.string().min(1).max(200),
  namespaces: Namespaces,
  grant: ManagedAgentGrant,
  toolPolicy: ToolPolicy,
};

const AgentAnswer = success({ agent: ManagedAgent });
const KeyWithSecret = z.object({
  key: ManagedAgentKey,
  apiKey: z.string().describe("`svc_sk_…`: shown this once; its principal is the agent, limited to its grant"),
});

export const managedAgentRoutes = {
  createManagedAgent: defineRoute({
    method: "POST",
    path: "/managed-agents",
    category: "managed-agents",
    summary: "Create a managed agent; answers the record and its first API key (shown once)",
    auth: "user",
    scope: "os.agents:write",
    bodyLimit: 64 * 1024,
    body: z.object({
      handle: Handle,
      name: AgentFields.name.optional(),
      description: AgentFields.description.optional(),
      instructions: AgentFields.instructions.optional(),
      model: AgentFields.model.optional(),
      namespaces: AgentFields.namespaces.optional(),
      grant: AgentFields.grant.optional(),
      toolPolicy: AgentFields.toolPolicy.optional(),
    }),
    response: success({ agent: ManagedAgent, ...KeyWithSecret.shape }),
    successStatuses: [201],
  }),
  listManagedAgents: defineRoute({
    method: "GET",
    path: "/managed-agents",
    category: "managed-agents",
    summary: "The caller's managed agents",
    auth: "user",
    scope: "os.agents:read",
    response: success({ agents: z.array(ManagedAgent) }),
  }),
  getManagedAgent: defineRoute({
    method: "GET",
    path: "/managed-agents/:id",
    category: "managed-agents",
    summary: "One managed agent",
    auth: "user",
    scope: "os.agents:read",
    params: AgentId,
    response: AgentAnswer,
  }),
  updateManagedAgent: defineRoute({
    method: "PATCH",
    path: "/managed-agents/:id",
    category: "managed-agents",
    summary:
      "Change an agent (its handle stays); `status: paused` pauses it (409 agent_paused wherever it is reached), `active` resumes it",
    auth: "user",
    scope: "os.agents:write",
    bodyLimit: 64 * 1024,
    params: AgentId,
    body: z
      .object({
        name: AgentFields.name.optional(),
        description: AgentFields.description.optional(),
        instructions: AgentFields.instructions.optional(),
        model: AgentFields.model.optional(),
        namespaces: AgentFields.namespaces.optional(),
        grant: AgentFields.grant.optional(),
        toolPolicy: AgentFields.toolPolicy.optional(),
        status: z.enum(["active", "paused"]).optional(),
      })
      .refine((body) => Object.values(body).some((value) => value !== undefined), { error: "give at least one field to change" }),
    response: AgentAnswer,
  }),
  deleteManagedAgent: defineRoute({
    method: "DELETE",
    path: "/managed-agents/:id",
    category: "managed-agents",
    summary: "Delete an agent with its keys (revoked at once) and its runs",
    auth: "user",
    scope: "os.agents:write",
    params: AgentId,
    response: success({}),
  }),
  createManagedAgentKey: defineRoute({
    method: "POST",
    path: "/managed-agents/:id/keys",
    category: "managed-agents",
    summary: "A new API key for the agent, shown once (the older ones keep working until revoked)",
    auth: "user",
    scope: "os.agents:write",
    params: AgentId,
    body: z.object({ label: KeyLabel.optional() }).default({}),
    response: success(KeyWithSecret.shape),
    successStatuses: [201],
  }),
  listManagedAgentKeys: defineRoute({
    method: "GET",
    path: "/managed-agents/:id/keys",
    category: "managed-agents",
    summary: "The agent's keys, newest first (never a secret)",
    auth: "user",
    scope: "os.agents:read",
    params: AgentId,
    response: success({ keys: z.array(ManagedAgentKey) }),
  }),
  revokeManagedAgentKey: defineRoute({
    method: "DELETE",
    path: "/managed-agents/:id/keys/:keyId",
    category: "managed-agents",
    summary: "Revoke one of the agent's keys (at once, on every instance)",
    auth: "user",
    scope: "os.agents:write",
    params: z.object({ id: IdParam, keyId: z.string().min(1).max(100) }),
    response: success({ key: ManagedAgentKey }),
  }),
  runManagedAgent: defineRoute({
    method: "POST",
    path: "/managed-agents/:id/runs",
    category: "managed-agents",
    summary:
      "Run the agent on an input under its own grant and tool policy. Streams newline-delimited JSON (text/plain, the chat stream's lines) unless `stream` is false",
    auth: "user",
    scope: "os.agents:write",
    params: AgentId,
    body: z.object({
      input: z
        .string({ error: "input is required" })
        .max(MAX_AGENT_RUN_INPUT_CHARS, { error: `must be at most ${MAX_AGENT_RUN_INPUT_CHARS} characters` })
        .refine((text) => text.trim().length > 0, { error: "must not be empty" }),
      stream: z.boolean().default(false),
    }),
    responseMediaType: "text/plain",
    response: ManagedAgentRunStreamLine,
    jsonResponse: success({ run: ManagedAgentRun }),
    successStatuses: [200, 201],
  }),
  listManagedAgentRuns: defineRoute({
    method: "GET",
    path: "/managed-agents/:id/runs",
    category: "managed-agents",
    summary: "The agent's runs, newest first, each with its status, tools used and tokens",
    auth: "user",
    scope: "os.agents:read",
    params: AgentId,
    query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) }),
    response: success({ runs: z.array(ManagedAgentRun) }),
  }),
} as const;
