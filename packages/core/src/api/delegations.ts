import { z } from "zod";
import { success, Timestamp } from "./common";
import { ClientMessageId, MAX_GRANT_TTL_MINUTES, RequestedTtlMinutes } from "./grants";
import { PrincipalIdText } from "./network";
import { defineRoute } from "./route";

/**
 * Delegations: a bridge hands a task to a connected person's agent. The first call opens a
 * collaboration request (202); once that person's owner allows it, the same call (same
 * clientMessageId) opens a grant to their default route and dispatches a `task_invite` (201).
 */

/** The largest task, in UTF-8 bytes. */
export const MAX_TASK_BYTES = 32 * 1024;
/** How long a collaboration request waits for the owner, and an accepted one for the requester's retry. */
export const COLLABORATION_TTL_MINUTES = 10;

export const CollaborationStatus = z
  .enum(["requested", "accepted", "declined", "delegated", "expired"])
  .describe("requested: waiting for the owner; accepted: allowed, the task is sent on the next call; delegated: the task was sent");
export const CollaborationDecision = z
  .enum(["allow_once", "always_allow", "deny"])
  .describe("always_allow also lets this requester delegate later tasks without asking");

const PrincipalId = z.union([PrincipalIdText, z.number().int().positive()]).transform(String);

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

const CreateDelegationBody = z.object({
  target: z
    .union(
      [
        z.string().trim().min(1, { error: "must not be empty" }).max(200),
        z.object({ principalId: PrincipalId }).describe("extra fields such as kind are ignored"),
      ],
      { error: "must be a handle (username, @username, username_coo or principal id) or {principalId}" },
    )
    .describe("the person whose agent should do the task"),
  task: z
    .string()
    .min(1, { error: "must not be empty" })
    .refine((task) => utf8Bytes(task) <= MAX_TASK_BYTES, { error: `must be at most ${MAX_TASK_BYTES} bytes (32 KiB)` }),
  sessionHandle: z
    .string()
    .min(1, { error: "must not be empty" })
    .max(200)
    .describe("the caller's own open session; replies come back to it"),
  clientMessageId: ClientMessageId.optional().describe(
    "the delegation's idempotency key: re-post with it until delegated (same target and task; a context or correlationId left out keeps the first post's); generated when absent",
  ),
  requestedTtlMinutes: RequestedTtlMinutes.optional().describe(`the grant's lifetime; default and cap ${MAX_GRANT_TTL_MINUTES}`),
  correlationId: z
    .string()
    .min(1, { error: "must not be empty" })
    .max(200)
    .optional()
    .describe("the caller's own conversation id: the task_invite and every reply carry it (default: the collaborationId)"),
  context: z
    .unknown()
    .optional()
    .describe("a JSON object of at most 16 KiB without credentials or secrets; anything else is refused (unsafe_context)"),
});

export const Collaboration = z.object({
  collaborationId: z.string(),
  status: CollaborationStatus,
  answer: z.enum(["once", "always"]).nullable(),
  requesterPrincipalId: z.string(),
  requesterUsername: z.string(),
  targetPrincipalId: z.string(),
  targetUsername: z.string(),
  clientMessageId: z.string(),
  task: z.string().describe("untrusted text from the requester"),
  context: z.record(z.string(), z.unknown()).nullable(),
  requestedTtlMinutes: z.number().int(),
  communicationSessionId: z.string().nullable().describe("the grant the task went out on, once delegated"),
  messageId: z.string().nullable(),
  createdAt: Timestamp,
  expiresAt: Timestamp,
  resolvedAt: Timestamp.nullable(),
});
export type Collaboration = z.infer<typeof Collaboration>;

const CollaborationRequested = success({
  ok: z.literal(true),
  status: z.literal("collaboration_requested"),
  collaborationId: z.string(),
  targetPrincipalId: z.string(),
  clientMessageId: z.string(),
  correlationId: z
    .string()
    .describe("what the task invite will carry (the first post's correlationId, else the collaborationId); a re-post may leave it out"),
  expiresAt: Timestamp,
  message: z.string(),
});

const Delegated = success({
  ok: z.literal(true),
  status: z.literal("delegated"),
  collaborationId: z.string(),
  targetPrincipalId: z.string(),
  clientMessageId: z.string(),
  communicationSessionId: z.string(),
  messageId: z.string(),
  deliveryId: z.string(),
  correlationId: z.string().describe("what the task invite carries: the first post's correlationId, else the collaborationId"),
  duplicate: z.boolean().describe("true when this delegation had already been sent"),
  queuedAt: Timestamp,
});

export const delegationRoutes = {
  createDelegation: defineRoute({
    method: "POST",
    path: "/local-agent/delegations",
    category: "delegations",
    summary:
      "Delegate a task to a connected person's agent: 202 collaboration_requested until their owner allows it, then (same clientMessageId) 201 delegated with a task_invite dispatched",
    auth: "device",
    successStatuses: [202, 201],
    body: CreateDelegationBody,
    response: z.union([CollaborationRequested, Delegated]),
  }),
  listCollaborations: defineRoute({
    method: "GET",
    path: "/local-agent/collaborations",
    category: "delegations",
    summary: "Collaboration requests to the caller (incoming, to answer) and from the caller (outgoing), newest first",
    auth: "user",
    scope: "os.team:read",
    query: z.object({
      status: CollaborationStatus.optional(),
      limit: z.coerce.number().int().min(1).max(500).default(100).describe("per direction"),
    }),
    response: success({ incoming: z.array(Collaboration), outgoing: z.array(Collaboration) }),
  }),
  respondToCollaboration: defineRoute({
    method: "POST",
    path: "/local-agent/collaborations/:id/respond",
    category: "delegations",
    summary: "The target's owner answers a collaboration request: allow_once, always_allow or deny",
    auth: "user",
    scope: "os.team:write",
    params: z.object({ id: z.string().min(1).max(200) }),
    body: z.object({ decision: CollaborationDecision }),
    response: success({ collaboration: Collaboration, message: z.string() }),
  }),
  listCollaborationAllowances: defineRoute({
    method: "GET",
    path: "/local-agent/collaboration-allowances",
    category: "delegations",
    summary: "The people the caller lets delegate without asking (always_allow)",
    auth: "user",
    scope: "os.team:read",
    response: success({
      allowances: z.array(z.object({ principalId: z.string(), username: z.string(), createdAt: Timestamp })),
    }),
  }),
  deleteCollaborationAllowance: defineRoute({
    method: "DELETE",
    path: "/local-agent/collaboration-allowances/:principalId",
    category: "delegations",
    summary: "Stop letting this person delegate without asking; their next delegation asks again",
    auth: "user",
    scope: "os.team:write",
    params: z.object({ principalId: PrincipalId }),
    response: success({ message: z.string() }),
  }),
} as const;
