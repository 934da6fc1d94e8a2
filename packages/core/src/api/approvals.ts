import { z } from "zod";
import { IdParam, success, Timestamp } from "./common";
import { checkCommSessionIds } from "./grants";
import { PrincipalIdText } from "./network";
import { defineRoute } from "./route";

/**
 * Tool approvals: a grant lets someone ask, never run tools. Every tool call the owner's runtime
 * makes for a peer is either allowed by one of the owner's policies or decided by the owner.
 */

export const ApprovalStatus = z
  .enum(["auto_allow", "pending", "allowed", "denied", "expired"])
  .describe("auto_allow: a policy allowed it; pending: waiting for the owner; expired: left alone or the grant ended (a deny)");
export const ApprovalDecision = z.enum(["allow", "deny"]);
export const ApprovalScope = z.enum(["once", "session"]).describe("session: allow this tool for the rest of the grant's session");

export const MAX_TOOL_NAME_LENGTH = 200;
export const MAX_TOOL_INPUT_SUMMARY_LENGTH = 500;

const OpaqueId = z.string().trim().min(1, { error: "must not be empty" }).max(200);
const ToolName = z
  .string()
  .trim()
  .min(1, { error: "must not be empty" })
  .max(MAX_TOOL_NAME_LENGTH, { error: `must be at most ${MAX_TOOL_NAME_LENGTH} characters` });

export const ToolApproval = z.object({
  approvalId: z.string(),
  status: ApprovalStatus,
  decision: ApprovalDecision.nullable(),
  scope: ApprovalScope.nullable(),
  toolName: z.string(),
  toolInputSummary: z.string(),
  communicationSessionId: z.string(),
  requesterPrincipalId: z.string().describe("the peer whose grant the tool call serves"),
  endpointId: z.string().describe("the owner's endpoint whose runtime asked"),
  sessionHandle: z.string().nullable(),
  messageId: z.string().nullable(),
  policyId: z.number().int().nullable().describe("the policy that allowed it (auto_allow) or that the decision created"),
  createdAt: Timestamp,
  expiresAt: Timestamp,
  resolvedAt: Timestamp.nullable(),
});
export type ToolApproval = z.infer<typeof ToolApproval>;

export const ToolPolicy = z.object({
  policyId: z.number().int(),
  toolName: z.string().describe("an exact tool name, or * (only when narrowed to a grant or a peer)"),
  communicationSessionId: z.string().nullable().describe("only on this grant"),
  peerPrincipalId: z.string().nullable().describe("only for grants from this person"),
  sessionHandle: z.string().nullable().describe("only for this session of the owner's runtime"),
  decision: z.literal("allow"),
  source: z.enum(["owner", "session_decision"]).describe("owner: made here; session_decision: an allow with scope session"),
  createdAt: Timestamp,
  expiresAt: Timestamp.nullable(),
});
export type ToolPolicy = z.infer<typeof ToolPolicy>;

const RequestApprovalBody = z
  .object({
    commSessionId: OpaqueId.optional(),
    communicationSessionId: OpaqueId.optional(),
    sessionHandle: OpaqueId.optional(),
    messageId: OpaqueId.optional(),
    toolName: ToolName,
    toolInputSummary: z
      .string()
      .max(MAX_TOOL_INPUT_SUMMARY_LENGTH, { error: `must be at most ${MAX_TOOL_INPUT_SUMMARY_LENGTH} characters` }),
  })
  .superRefine((body, ctx) => checkCommSessionIds(body, ctx, { required: true }))
  .transform(({ commSessionId, communicationSessionId, ...rest }) => ({
    ...rest,
    communicationSessionId: (communicationSessionId ?? commSessionId) as string,
  }));

const CreatePolicyBody = z
  .object({
    toolName: z.union([z.literal("*"), ToolName]),
    commSessionId: OpaqueId.optional(),
    communicationSessionId: OpaqueId.optional(),
    peerPrincipalId: PrincipalIdText.optional(),
    sessionHandle: OpaqueId.optional(),
    expiresAt: z.iso.datetime({ error: "must be an ISO 8601 UTC timestamp" }).optional(),
  })
  .superRefine((body, ctx) => checkCommSessionIds(body, ctx, { required: false }))
  .transform(({ commSessionId, communicationSessionId, ...rest }) => ({
    ...rest,
    communicationSessionId: communicationSessionId ?? commSessionId,
  }));

const ApprovalIdParams = z.object({ id: OpaqueId });

export const approvalRoutes = {
  requestToolApproval: defineRoute({
    method: "POST",
    path: "/local-agent/tool-approvals",
    category: "approvals",
    summary:
      "A bridge asks before its runtime runs a tool for a peer: a matching owner policy allows it at once, otherwise it waits for the owner (5 minutes; left alone it denies)",
    auth: "device",
    successStatuses: [201],
    body: RequestApprovalBody,
    response: success({
      approvalId: z.string(),
      status: z.enum(["auto_allow", "pending"]),
      decision: z.literal("allow").nullable(),
      scope: ApprovalScope.nullable(),
      expiresAt: Timestamp,
    }),
  }),
  listToolApprovals: defineRoute({
    method: "GET",
    path: "/local-agent/tool-approvals",
    category: "approvals",
    summary: "The caller's tool approvals (as owner), newest first; status=pending for the ones waiting",
    auth: "user",
    scope: "os.team:read",
    query: z.object({
      status: ApprovalStatus.optional(),
      limit: z.coerce.number().int().min(1).max(500).default(100),
    }),
    response: success({ approvals: z.array(ToolApproval) }),
  }),
  getToolApproval: defineRoute({
    method: "GET",
    path: "/local-agent/tool-approvals/:id",
    category: "approvals",
    summary: "One approval; visible to its owner (user key) and to the bridge that asked (its device token) only",
    auth: "any",
    scope: "os.team:read",
    params: ApprovalIdParams,
    response: success(ToolApproval.shape),
  }),
  resolveToolApproval: defineRoute({
    method: "POST",
    path: "/local-agent/tool-approvals/:id/resolve",
    category: "approvals",
    summary: "The owner allows or denies a pending approval (scope once, or session: this tool for the rest of the grant's session)",
    auth: "user",
    scope: "os.team:write",
    params: ApprovalIdParams,
    body: z.object({ decision: ApprovalDecision, scope: ApprovalScope.default("once") }),
    response: success({ ...ToolApproval.shape, message: z.string() }),
  }),
  listToolPolicies: defineRoute({
    method: "GET",
    path: "/local-agent/tool-policies",
    category: "approvals",
    summary: "The caller's standing tool policies (allow rules); expired ones are left out",
    auth: "user",
    scope: "os.team:read",
    response: success({ policies: z.array(ToolPolicy) }),
  }),
  createToolPolicy: defineRoute({
    method: "POST",
    path: "/local-agent/tool-policies",
    category: "approvals",
    summary: "Allow a tool without asking, optionally only on one grant, for one peer and/or in one session; * needs a grant or a peer",
    auth: "user",
    scope: "os.team:write",
    successStatuses: [201],
    body: CreatePolicyBody,
    response: success({ policy: ToolPolicy, message: z.string() }),
  }),
  deleteToolPolicy: defineRoute({
    method: "DELETE",
    path: "/local-agent/tool-policies/:id",
    category: "approvals",
    summary: "Remove a tool policy; later calls of that tool ask again",
    auth: "user",
    scope: "os.team:write",
    params: z.object({ id: IdParam }),
    response: success({ message: z.string() }),
  }),
} as const;
