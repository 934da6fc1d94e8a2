import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** Grant (communication session) statuses, as bridges read them. */
export const GRANT_STATUSES = ["pending", "active", "declined", "revoked", "expired"] as const;
export type GrantStatusName = (typeof GRANT_STATUSES)[number];

/** The message kinds a grant carries; anything else is refused with 403 `invalid_message_kind`. */
export const MESSAGE_KINDS = ["text", "task_invite", "resource_request"] as const;
export type MessageKindName = (typeof MESSAGE_KINDS)[number];

export const DELIVERY_STATUSES = [
  "queued",
  "dispatched",
  "device_acked",
  "runtime_pending",
  "runtime_acked",
  "replied",
  "failed",
  "expired",
  "revoked",
] as const;
export type DeliveryStatusName = (typeof DELIVERY_STATUSES)[number];

export const ACK_PHASES = ["device_ack", "runtime_pending", "runtime_ack", "runtime_failed"] as const;
export type AckPhaseName = (typeof ACK_PHASES)[number];

/** The largest message payload (or reply body), as serialized JSON, in bytes. */
export const MAX_PAYLOAD_BYTES = 32 * 1024;
/** The longest grant, and the cap on `requestedTtlMinutes`. */
export const MAX_GRANT_TTL_MINUTES = 30;
/** How long a grant request waits for an answer. */
export const GRANT_REQUEST_TTL_MINUTES = 10;

/** Opaque runtime ids (`cs_…`, `msg_…`, `ep_…`, session handles). */
const OpaqueId = z.string().min(1, { error: "must not be empty" }).max(200, { error: "is too long" });
/** The caller's idempotency key for a message or a delegation. */
export const ClientMessageId = z
  .string()
  .min(1, { error: "must be 1 to 128 characters" })
  .max(128, { error: "must be 1 to 128 characters" });
/** A grant's lifetime as asked for, in whole minutes; the server caps it at {@link MAX_GRANT_TTL_MINUTES}. */
export const RequestedTtlMinutes = z.number().int({ error: "must be a whole number of minutes" }).min(1, { error: "must be at least 1" });
const IdParams = z.object({ id: OpaqueId });

/** A body that names a grant by either of its two names. */
export interface CommSessionIds {
  commSessionId?: string | undefined;
  communicationSessionId?: string | undefined;
}

/**
 * `commSessionId` (the interface's name) and `communicationSessionId` (the bridges') are one
 * field: a body gives one of them, or both with the same value. For `superRefine`.
 */
export function checkCommSessionIds<T extends CommSessionIds>(body: T, ctx: z.RefinementCtx<T>, options: { required: boolean }): void {
  const { commSessionId, communicationSessionId } = body;
  if (commSessionId === undefined && communicationSessionId === undefined) {
    if (options.required) {
      ctx.addIssue({ code: "custom", path: ["communicationSessionId"], message: "communicationSessionId (or commSessionId) is required" });
    }
  } else if (commSessionId !== undefined && communicationSessionId !== undefined && commSessionId !== communicationSessionId) {
    ctx.addIssue({ code: "custom", path: ["commSessionId"], message: "differs from communicationSessionId; send one of them" });
  }
}

/** A grant as `GET /local-agent/grants` lists it: the flat row bridges rely on. */
export const GrantRow = z.object({
  commSessionId: z.string(),
  communicationSessionId: z.string().describe("the same as commSessionId"),
  requesterPrincipalId: z.string(),
  requesterDeviceId: z.string().nullable(),
  requesterReplyEndpointId: z.string().nullable(),
  requesterReplySessionHandle: z.string().nullable(),
  recipientPrincipalId: z.string(),
  targetKind: z.string(),
  targetOfferId: z.string().nullable(),
  frozenEndpointId: z.string().nullable(),
  frozenSessionHandle: z.string().nullable(),
  status: z.enum(GRANT_STATUSES),
  requestedAt: Timestamp,
  requestExpiresAt: Timestamp,
  activatedAt: Timestamp.nullable(),
  grantExpiresAt: Timestamp.nullable(),
  revokedAt: Timestamp.nullable(),
});
export type GrantRow = z.infer<typeof GrantRow>;

export const RequestGrantBody = z
  .object({
    target: z.object({
      kind: z.string().min(1).max(64).describe("person_default_runtime"),
      principalId: z
        .union([z.string().min(1).max(64), z.number().int().positive()])
        .transform(String)
        .describe("the person's user id, as resolve-person answers it"),
    }),
    requestedTtlMinutes: RequestedTtlMinutes.optional().describe("default 30; larger values are capped at 30"),
    replyEndpointId: OpaqueId.optional().describe("with replySessionHandle: where replies go (default: the requester's default route)"),
    replySessionHandle: OpaqueId.optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.replyEndpointId === undefined) !== (body.replySessionHandle === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["replySessionHandle"],
        message: "give both replyEndpointId and replySessionHandle, or neither",
      });
    }
  });
export type RequestGrantBody = z.output<typeof RequestGrantBody>;

/**
 * A message on a grant, in the bridges' form (`communicationSessionId`, `kind`, `payload`) or the
 * interface's (`commSessionId`, `body` as text). Both normalise to {@link SendMessageInput}.
 */
export const SendMessageBody = z
  .object({
    communicationSessionId: OpaqueId.optional(),
    commSessionId: OpaqueId.optional().describe("the same as communicationSessionId"),
    clientMessageId: ClientMessageId.optional().describe("idempotency key; generated when absent"),
    kind: z.string().max(64).optional().describe("text (default), task_invite or resource_request"),
    payload: z.unknown().optional().describe("any JSON, at most 32 KiB serialized"),
    body: z.string().optional().describe("a text message; the same as payload {text: body}"),
    replyTo: OpaqueId.nullable().optional(),
    correlationId: OpaqueId.nullable().optional(),
  })
  .superRefine((body, ctx) => {
    checkCommSessionIds(body, ctx, { required: true });
    if (body.payload === undefined && body.body === undefined) {
      ctx.addIssue({ code: "custom", path: ["payload"], message: "payload (or body) is required" });
    } else if (body.payload !== undefined && body.body !== undefined) {
      ctx.addIssue({ code: "custom", path: ["body"], message: "give either payload or body, not both" });
    }
  })
  .transform(
    (body): SendMessageInput => ({
      communicationSessionId: (body.communicationSessionId ?? body.commSessionId) as string,
      clientMessageId: body.clientMessageId,
      kind: body.kind ?? "text",
      payload: body.body !== undefined ? { text: body.body } : body.payload,
      replyTo: body.replyTo ?? null,
      correlationId: body.correlationId ?? null,
    }),
  );

/** What sending a message needs, whichever form it arrived in. */
export interface SendMessageInput {
  communicationSessionId: string;
  /** Absent: the server makes one (and the send is then not idempotent). */
  clientMessageId?: string | undefined;
  /** Checked by the server: text, task_invite or resource_request. */
  kind: string;
  payload: unknown;
  replyTo?: string | null;
  correlationId?: string | null;
}

/** What a message send (or reply) answers. */
export const MessageReceipt = success({
  messageId: z.string(),
  deliveryId: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  duplicate: z.boolean().describe("true when this clientMessageId was already sent with the same body"),
  queuedAt: Timestamp,
  communicationSessionId: z.string(),
  commSessionId: z.string(),
  sequence: z.number().int().describe("the message's number on its grant"),
  correlationId: z.string().nullable(),
});
export type MessageReceipt = z.infer<typeof MessageReceipt>;

export const MessageDelivery = z.object({
  deliveryId: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  queuedAt: Timestamp,
  dispatchedAt: Timestamp.nullable(),
  deviceAckReceivedAt: Timestamp.nullable(),
  runtimePendingAt: Timestamp.nullable(),
  runtimeAckReceivedAt: Timestamp.nullable(),
  terminalAt: Timestamp.nullable(),
  resultCode: z.string().nullable(),
  runtimeAckId: z.string().nullable(),
});

export const DeliveryAttempt = z.object({
  attemptId: z.string(),
  phase: z.enum(ACK_PHASES),
  resultCode: z.string().nullable(),
  retryable: z.boolean().nullable(),
  runtimeAckId: z.string().nullable(),
  createdAt: Timestamp,
});

export const MessageAckBody = z.object({
  phase: z.enum(ACK_PHASES),
  attemptId: OpaqueId,
  resultCode: z.string().max(200).nullable().optional(),
  retryable: z.boolean().nullable().optional(),
  runtimeAckId: z.string().max(200).nullable().optional(),
  usage: z
    .object({
      model: z.string().max(200).nullable().optional(),
      inputTokens: z.number().int().min(0).nullable().optional(),
      outputTokens: z.number().int().min(0).nullable().optional(),
    })
    .nullable()
    .optional(),
});
export type MessageAckBody = z.output<typeof MessageAckBody>;

export const MessageReplyBody = z.object({
  body: z.string().describe("the reply text, at most 32 KiB"),
  clientMessageId: ClientMessageId.optional(),
});

/** Fields that are not strings count as absent: validation then fails closed with a reason. */
const LooseId = z.string().optional().catch(undefined);
export const ValidateInjectionBody = z.object({
  messageId: LooseId,
  communicationSessionId: LooseId,
  commSessionId: LooseId,
  endpointId: LooseId,
  sessionHandle: LooseId,
});
export type ValidateInjectionBody = z.output<typeof ValidateInjectionBody>;

export const INJECTION_REJECTIONS = [
  "wrong_target",
  "endpoint_not_owned",
  "communication_session_expired",
  "communication_session_revoked",
  "communication_session_declined",
  "communication_session_not_active",
  "delivery_terminal",
  "message_expired",
  "session_not_found",
  "session_closed",
  "inbound_disabled",
] as const;

/** Message bodies are JSON; allow the payload limit plus room for the other fields. */
const MESSAGE_BODY_LIMIT = 256 * 1024;

const grantRoute = { category: "grants", auth: "any" } as const;
const messageRoute = { category: "messages" } as const;

export const grantRoutes = {
  requestGrant: defineRoute({
    ...grantRoute,
    method: "POST",
    path: "/local-agent/grants",
    summary: "Ask a person for a short-lived grant to their default runtime (needs their agent permission); pending until they accept",
    scope: "os.team:write",
    body: RequestGrantBody,
    successStatuses: [201],
    response: success(GrantRow.shape),
  }),
  listGrants: defineRoute({
    ...grantRoute,
    method: "GET",
    path: "/local-agent/grants",
    summary:
      "Grants where the caller is requester or recipient, newest first; a device token gets the rows as a bare JSON array (what bridges read)",
    scope: "os.team:read",
    response: success({ grants: z.array(GrantRow) }),
  }),
  getGrant: defineRoute({
    ...grantRoute,
    method: "GET",
    path: "/local-agent/grants/:id",
    summary: "One grant the caller is party to",
    scope: "os.team:read",
    params: IdParams,
    response: success(GrantRow.shape),
  }),
  acceptGrant: defineRoute({
    ...grantRoute,
    method: "POST",
    path: "/local-agent/grants/:id/accept",
    summary: "Recipient accepts a pending grant: freezes their default route; expires at most 30 minutes later",
    scope: "os.team:write",
    params: IdParams,
    body: z.looseObject({}).optional(),
    response: success(GrantRow.shape),
  }),
  declineGrant: defineRoute({
    ...grantRoute,
    method: "POST",
    path: "/local-agent/grants/:id/decline",
    summary: "Recipient declines a pending grant",
    scope: "os.team:write",
    params: IdParams,
    body: z.looseObject({}).optional(),
    response: success(GrantRow.shape),
  }),
  revokeGrant: defineRoute({
    ...grantRoute,
    method: "POST",
    path: "/local-agent/grants/:id/revoke",
    summary: "Either party ends a pending or active grant; its undelivered messages are revoked at once",
    scope: "os.team:write",
    params: IdParams,
    body: z.looseObject({}).optional(),
    response: success(GrantRow.shape),
  }),
  sendGrantMessage: defineRoute({
    ...messageRoute,
    method: "POST",
    path: "/local-agent/messages",
    summary:
      "The requester sends a message on an active grant to its frozen route; idempotent per clientMessageId. The recipient's device with replyTo answers a message delivered to it (the same as …/reply)",
    auth: "any",
    scope: "os.team:write",
    body: SendMessageBody,
    bodyLimit: MESSAGE_BODY_LIMIT,
    successStatuses: [201, 200],
    response: MessageReceipt,
  }),
  getGrantMessage: defineRoute({
    ...messageRoute,
    method: "GET",
    path: "/local-agent/messages/:id",
    summary: "A message's delivery state and its ack attempts (sender and recipient only)",
    auth: "any",
    scope: "os.team:read",
    params: IdParams,
    response: success({ delivery: MessageDelivery, attempts: z.array(DeliveryAttempt) }),
  }),
  ackGrantMessage: defineRoute({
    ...messageRoute,
    method: "POST",
    path: "/local-agent/messages/:id/ack",
    summary: "The target device reports delivery progress; idempotent per attemptId and phase",
    auth: "device",
    params: IdParams,
    body: MessageAckBody,
    response: success({ recorded: z.enum(["state", "audit_only"]), status: z.enum(DELIVERY_STATUSES), deliveryId: z.string() }),
  }),
  replyToGrantMessage: defineRoute({
    ...messageRoute,
    method: "POST",
    path: "/local-agent/messages/:id/reply",
    summary: "The target device answers a message; the reply travels back to the sender's reply route",
    auth: "device",
    params: IdParams,
    body: MessageReplyBody,
    bodyLimit: MESSAGE_BODY_LIMIT,
    successStatuses: [201, 200],
    response: MessageReceipt,
  }),
  validateInjection: defineRoute({
    ...messageRoute,
    method: "POST",
    path: "/local-agent/injections/validate",
    summary: "Whether a delivered message may be injected into a session now (fail-closed; always 200)",
    auth: "device",
    body: ValidateInjectionBody,
    response: z.union([
      success({ valid: z.literal(true) }),
      success({ valid: z.literal(false), reason: z.enum([...INJECTION_REJECTIONS, "validation_unavailable"]) }),
    ]),
  }),
  getCredits: defineRoute({
    category: "credits",
    method: "GET",
    path: "/local-agent/credits",
    summary:
      "The caller's Credit balance (each task_invite reserves one): set by the operator, else the server's default (unlimited or a monthly allowance)",
    auth: "user",
    scope: "os.team:read",
    response: success({
      balance: z.number().int().nullable().describe("null when unlimited"),
      unlimited: z.boolean(),
      monthlyAllowance: z.number().int().nullable().describe("the allowance this balance is left of, when it follows one"),
      source: z.enum(["set", "allowance", "unlimited"]).describe("set: by an operator (tandem-server credits set)"),
    }),
  }),
} as const;
