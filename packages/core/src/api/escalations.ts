import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/**
 * Escalations: an agent action paused for its owner's binary decision, continue or stop. A run
 * (heartbeat ACTIONS, agent RPC, managed agent) that calls a tool whose policy is `ask` records
 * the exact call and waits; a bridge's tool approval with no decision and no policy is listed here
 * too (`source.type: "bridge"`), so one list holds everything waiting for the owner.
 */
export const ESCALATION_STATUSES = ["pending", "continued", "stopped", "expired"] as const;
export type EscalationStatus = (typeof ESCALATION_STATUSES)[number];
export const ESCALATION_SOURCE_TYPES = ["heartbeat", "managed_agent", "agent_rpc", "bridge"] as const;
export type EscalationSourceType = (typeof ESCALATION_SOURCE_TYPES)[number];

/** What the model is told of a call the owner stopped (or left to expire). */
export const STOPPED_BY_OWNER = "stopped by the owner";

export const Escalation = z.object({
  id: z.string().describe("`esc_…`; a bridge approval keeps its own `apr_…` id"),
  kind: z.literal("tool_call"),
  source: z.object({
    type: z.enum(ESCALATION_SOURCE_TYPES),
    id: z.string().describe("heartbeat: the run id; agent_rpc: the caller's user id; managed_agent: the agent's id; bridge: the grant id"),
  }),
  runId: z.string().nullable().describe("the paused run (`run_…`); null for a bridge approval"),
  toolName: z.string(),
  summary: z.string().describe("what the agent wants to do, in plain words"),
  consequence: z.string().describe("what continuing would do"),
  argumentsHash: z.string().describe("SHA-256 (hex) of the recorded arguments as canonical JSON; continue runs exactly these"),
  status: z.enum(ESCALATION_STATUSES),
  createdAt: Timestamp,
  expiresAt: Timestamp.describe("left alone until then, it counts as stop"),
  decidedAt: Timestamp.nullable(),
  decidedBy: z.string().nullable().describe("the owner's user id (`owner` for a bridge approval), or `expiry`"),
});
export type Escalation = z.infer<typeof Escalation>;

const EscalationId = z.object({ id: z.string().min(1).max(100) });

export const escalationRoutes = {
  listEscalations: defineRoute({
    method: "GET",
    path: "/escalations",
    category: "escalations",
    summary: "The caller's escalations (paused tool calls and bridge approvals waiting for them), newest first",
    auth: "user",
    scope: "os.tools:read",
    query: z.object({
      status: z.enum(ESCALATION_STATUSES).optional(),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
    response: success({ escalations: z.array(Escalation) }),
  }),
  getEscalation: defineRoute({
    method: "GET",
    path: "/escalations/:id",
    category: "escalations",
    summary: "One escalation (another owner's is a 404)",
    auth: "user",
    scope: "os.tools:read",
    params: EscalationId,
    response: success({ escalation: Escalation }),
  }),
  resolveEscalation: defineRoute({
    method: "POST",
    path: "/escalations/:id/resolve",
    category: "escalations",
    summary:
      "Continue (run exactly the recorded call, once, and resume the run) or stop (the model is told it was stopped by the owner); 409 already_resolved or expired",
    auth: "user",
    scope: "os.tools:write",
    params: EscalationId,
    bodyLimit: 4 * 1024,
    body: z.object({ decision: z.enum(["continue", "stop"]) }),
    response: success({ escalation: Escalation }),
  }),
} as const;
