import {
  MANAGED_AGENT_HANDLE,
  MAX_AGENT_INSTRUCTIONS_CHARS,
  MAX_AGENT_RUN_INPUT_CHARS,
  RESERVED_AGENT_HANDLES,
  TandemApiError,
} from "@tandem/core";
import { z } from "zod";
import type {
  ManagedAgentItem,
  ManagedAgentKeyItem,
  ManagedAgentList,
  ManagedAgentRunItem,
  ManagedAgentWithKey,
} from "../../shared/desktop-api";
import { connectionsCall, isObjectMissing, isRouteMissing, lacksScope, readAnswer } from "../connections/connections-call";
import type { ManagedAgentsFacet } from "../facets";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";

/** Said when the server has no managed-agents routes (an older server). */
export const AGENTS_UNSUPPORTED = "This server doesn't support managed agents yet.";

/** Said instead of the list when the desktop's key lacks the `os.agents` scopes (a key made for something else). */
export const AGENTS_NOT_ALLOWED =
  "This desktop's key is not allowed to manage agents: it lacks the os.agents:read and os.agents:write permissions. " +
  "To manage agents here, sign out and sign in with an API key that has them.";

/** Said when the agent named was deleted meanwhile (on another device, say). */
export const AGENT_GONE = "This agent is no longer there; it may have been deleted elsewhere.";

export const AGENTS_OFFLINE = "Can't reach the server right now. Agents live on the server; try again once you are back online.";

/** The runs shown per agent (the server keeps more). */
const RUNS_SHOWN = 20;
/** The namespaces a managed agent's tools come from (its grant reaches notes and todos only). */
const AGENT_NAMESPACES = ["notes", "todos"] as const;

// Core's records, read leniently: fields this view does not use may come and go.
const Decision = z.enum(["allow", "ask", "deny"]);
const AgentShape = z.object({
  id: z.number().int(),
  handle: z.string(),
  name: z.string(),
  description: z.string().optional().default(""),
  instructions: z.string().optional().default(""),
  model: z.string(),
  namespaces: z.array(z.string()).optional().default([]),
  grant: z.object({
    notesAccess: z.object({
      scope: z.enum(["none", "folders", "all"]),
      folderIds: z.array(z.number().int()).optional().default([]),
      access: z.enum(["read", "write"]).optional().default("read"),
    }),
    todoAccess: z.object({ read: z.boolean(), create: z.boolean() }),
  }),
  toolPolicy: z.record(z.string(), Decision).optional().default({}),
  status: z.enum(["active", "paused"]),
  createdAt: z.string(),
});
const KeyShape = z.object({
  keyId: z.string(),
  label: z.string().nullable().optional().default(null),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable().optional().default(null),
  revokedAt: z.string().nullable().optional().default(null),
});
const RunShape = z.object({
  id: z.number().int(),
  source: z.string(),
  callerUserId: z.number().int().nullable().optional().default(null),
  status: z.string(),
  input: z.string(),
  output: z.string(),
  toolsUsed: z.array(z.string()).optional().default([]),
  usage: z.object({ totalTokens: z.number() }).loose().optional(),
  model: z.string().optional().default(""),
  error: z.string().nullable().optional().default(null),
  createdAt: z.string(),
  finishedAt: z.string().nullable().optional().default(null),
});
const AgentList = z.object({ agents: z.array(AgentShape) });
const OneAgent = z.object({ agent: AgentShape });
const AgentWithKey = z.object({ agent: AgentShape, key: KeyShape, apiKey: z.string().startsWith("svc_sk_") });
const KeyWithSecret = z.object({ key: KeyShape, apiKey: z.string().startsWith("svc_sk_") });
const KeyList = z.object({ keys: z.array(KeyShape) });
const RunList = z.object({ runs: z.array(RunShape) });
const OneRun = z.object({ run: RunShape });
const ToolList = z.object({
  tools: z.array(z.object({ name: z.string(), namespace: z.string(), readWrite: z.enum(["read", "write"]) }).loose()),
});
const FolderList = z.object({
  folders: z.array(z.object({ id: z.number().int(), name: z.string(), shared: z.boolean().optional() }).loose()),
});

// Core's bounds, checked here so a mistake is said before anything goes out.
const Id = z.number().int().positive();
const Handle = z
  .string()
  .trim()
  .regex(MANAGED_AGENT_HANDLE, { error: "must be 2 to 32 lowercase letters, digits or '-', starting with a letter" })
  .refine((handle) => !RESERVED_AGENT_HANDLES.has(handle), { error: "is a reserved word; pick another handle" });
const Settings = {
  name: z.string().trim().min(1, { error: "must not be empty" }).max(100, { error: "is too long" }),
  instructions: z.string().max(MAX_AGENT_INSTRUCTIONS_CHARS, { error: "are too long" }),
  model: z.string().trim().min(1).max(200),
  namespaces: z.array(z.enum(AGENT_NAMESPACES)).max(AGENT_NAMESPACES.length),
  grant: z.object({
    notesAccess: z.object({
      scope: z.enum(["none", "folders", "all"]),
      folderIds: z.array(Id).max(200),
      access: z.enum(["read", "write"]),
    }),
    todoAccess: z.object({ read: z.boolean(), create: z.boolean() }),
  }),
  toolPolicy: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/), Decision),
};
const SettingsInput = z.object({
  name: Settings.name.optional(),
  instructions: Settings.instructions.optional(),
  model: Settings.model.optional(),
  namespaces: Settings.namespaces.optional(),
  grant: Settings.grant.optional(),
  toolPolicy: Settings.toolPolicy.optional(),
});
const CreateInput = SettingsInput.extend({ handle: Handle });
const UpdateInput = SettingsInput.extend({ id: Id });
const IdInput = z.object({ id: Id });
const PausedInput = z.object({ id: Id, paused: z.boolean() });
const KeyInput = z.object({ id: Id, label: z.string().trim().max(100, { error: "is too long" }).optional() });
const RevokeInput = z.object({ id: Id, keyId: z.string().min(1).max(100) });
const RunInput = z.object({
  id: Id,
  input: z
    .string()
    .max(MAX_AGENT_RUN_INPUT_CHARS, { error: "is too long" })
    .refine((text) => text.trim().length > 0, { error: "must not be empty" }),
});

/** The server's refusals in words, where its own words would be codes. */
const REFUSALS: Record<string, string> = {
  handle_taken: "That handle is taken (by a person or another agent); pick another.",
  reserved_handle: "That handle is a reserved word; pick another.",
  too_many_agents: "You have as many agents as one person may (50); delete one first.",
  too_many_keys: "This agent has as many keys as it may (20); revoke one first.",
  agent_paused: "This agent is paused; resume it first.",
};

function agentItem(agent: z.output<typeof AgentShape>): ManagedAgentItem {
  return { ...agent, paused: agent.status === "paused" };
}

function keyItem(key: z.output<typeof KeyShape>): ManagedAgentKeyItem {
  return { keyId: key.keyId, label: key.label, createdAt: key.createdAt, lastUsedAt: key.lastUsedAt, revokedAt: key.revokedAt };
}

export function runItem(run: z.output<typeof RunShape>): ManagedAgentRunItem {
  return {
    id: run.id,
    source: run.source,
    fromAnotherPerson: run.callerUserId !== null,
    status: run.status,
    input: run.input,
    output: run.output,
    toolsUsed: run.toolsUsed,
    totalTokens: Math.max(0, Math.round(run.usage?.totalTokens ?? 0)),
    model: run.model,
    error: run.error,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
  };
}

/** `GET /managed-agents`'s answer; exported for the tests. */
export function readAgentList(answer: unknown): ManagedAgentItem[] {
  return readAnswer(AgentList, answer, "the agents").agents.map(agentItem);
}

/** Runs a request, naming the server's refusals of one agent in words. */
function aboutAgents<T>(request: () => Promise<T>, gone = AGENT_GONE): Promise<T> {
  return connectionsCall(request, AGENTS_OFFLINE).catch((error: unknown) => {
    if (isRouteMissing(error)) throw new Error(AGENTS_UNSUPPORTED, { cause: error });
    const refusal = error instanceof TandemApiError ? error : error instanceof Error ? error.cause : null;
    const code = refusal instanceof TandemApiError && typeof refusal.body.error === "string" ? refusal.body.error : null;
    if (code && REFUSALS[code]) throw new Error(REFUSALS[code], { cause: error });
    if (isObjectMissing(error)) throw new Error(gone, { cause: error });
    throw error;
  });
}

export function createManagedAgentMethods(session: SessionService): ManagedAgentsFacet {
  const signedIn = () => {
    const client = session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  return {
    async listManagedAgents(): Promise<ManagedAgentList> {
      const client = signedIn();
      let agents: ManagedAgentItem[];
      try {
        agents = readAgentList(await connectionsCall(() => client.call("listManagedAgents"), AGENTS_OFFLINE));
      } catch (error) {
        if (isRouteMissing(error)) return { supported: false, agents: [], tools: [], folders: [] };
        if (lacksScope(error)) return { supported: true, agents: [], tools: [], folders: [], notAllowed: AGENTS_NOT_ALLOWED };
        throw error;
      }
      // What the form offers: the notes and todos tools (for the policy) and the owner's own folders (for the grant).
      // Either failing leaves the list as it is: the form then offers less.
      const [tools, folders] = await Promise.allSettled([client.call("listTools"), client.call("listFolders", { query: {} })]);
      return {
        supported: true,
        agents,
        tools:
          tools.status === "fulfilled"
            ? readAnswer(ToolList, tools.value, "the tools")
                .tools.filter((tool) => (AGENT_NAMESPACES as readonly string[]).includes(tool.namespace))
                .map((tool) => ({ name: tool.name, namespace: tool.namespace, readWrite: tool.readWrite }))
                .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name))
            : [],
        folders:
          folders.status === "fulfilled"
            ? readAnswer(FolderList, folders.value, "the folders")
                .folders.filter((folder) => folder.shared !== true)
                .map((folder) => ({ id: folder.id, name: folder.name }))
            : [],
      };
    },

    async createManagedAgent(input): Promise<ManagedAgentWithKey> {
      const body = parseInput("createManagedAgent", CreateInput, input);
      const client = signedIn();
      const answer = await aboutAgents(() => client.call("createManagedAgent", { body }));
      const made = readAnswer(AgentWithKey, answer, "the new agent");
      return { agent: agentItem(made.agent), key: keyItem(made.key), apiKey: made.apiKey };
    },

    async updateManagedAgent(input) {
      const { id, ...body } = parseInput("updateManagedAgent", UpdateInput, input);
      const client = signedIn();
      const answer = await aboutAgents(() => client.call("updateManagedAgent", { params: { id }, body }));
      return agentItem(readAnswer(OneAgent, answer, "the agent").agent);
    },

    async setManagedAgentPaused(input) {
      const { id, paused } = parseInput("setManagedAgentPaused", PausedInput, input);
      const client = signedIn();
      const body = { status: paused ? ("paused" as const) : ("active" as const) };
      const answer = await aboutAgents(() => client.call("updateManagedAgent", { params: { id }, body }));
      return agentItem(readAnswer(OneAgent, answer, "the agent").agent);
    },

    async deleteManagedAgent(input) {
      const { id } = parseInput("deleteManagedAgent", IdInput, input);
      const client = signedIn();
      await aboutAgents(() => client.call("deleteManagedAgent", { params: { id } })).catch((error: unknown) => {
        // Already gone (deleted elsewhere): what the owner asked for is done.
        if (error instanceof Error && error.message === AGENT_GONE) return;
        throw error;
      });
    },

    async listManagedAgentKeys(input) {
      const { id } = parseInput("listManagedAgentKeys", IdInput, input);
      const client = signedIn();
      const answer = await aboutAgents(() => client.call("listManagedAgentKeys", { params: { id } }));
      return readAnswer(KeyList, answer, "the agent's keys").keys.map(keyItem);
    },

    async createManagedAgentKey(input) {
      const { id, label } = parseInput("createManagedAgentKey", KeyInput, input);
      const client = signedIn();
      const body = label ? { label } : {};
      const answer = await aboutAgents(() => client.call("createManagedAgentKey", { params: { id }, body }));
      const made = readAnswer(KeyWithSecret, answer, "the new key");
      return { key: keyItem(made.key), apiKey: made.apiKey };
    },

    async revokeManagedAgentKey(input) {
      const { id, keyId } = parseInput("revokeManagedAgentKey", RevokeInput, input);
      const client = signedIn();
      const answer = await aboutAgents(
        () => client.call("revokeManagedAgentKey", { params: { id, keyId } }),
        "This key is no longer there; it may have been revoked elsewhere, or its agent deleted.",
      );
      return keyItem(readAnswer(z.object({ key: KeyShape }), answer, "the key").key);
    },

    async listManagedAgentRuns(input) {
      const { id } = parseInput("listManagedAgentRuns", IdInput, input);
      const client = signedIn();
      const answer = await aboutAgents(() => client.call("listManagedAgentRuns", { params: { id }, query: { limit: RUNS_SHOWN } }));
      return readAnswer(RunList, answer, "the agent's runs").runs.map(runItem);
    },

    async runManagedAgent(input) {
      const { id, input: text } = parseInput("runManagedAgent", RunInput, input);
      const client = signedIn();
      const answer = await aboutAgents(() => client.call("runManagedAgent", { params: { id }, body: { input: text, stream: false } }));
      return runItem(readAnswer(OneRun, answer, "the run").run);
    },
  };
}
