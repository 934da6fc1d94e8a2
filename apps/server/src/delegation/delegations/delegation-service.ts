import type { Kysely } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { DevicePrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { ApiError, badRequest, conflict, forbidden } from "../../http/errors";
import { newId } from "../../ids";
import {
  canonicalHash,
  findMessage,
  grantTtlMinutes,
  inWriteUnit,
  type MessageReceipt,
  openActiveGrant,
  permittedUnderLock,
  sendMessage,
  serializePayload,
  toReceipt,
} from "../grants";
import { findEndpointSession } from "../runtime/sessions-service";
import { settleCollaboration } from "./collaboration-expiry";
import { type CollaborationRecord, collaborationExpiresAt, readContext, selectCollaborations, storeContext } from "./collaboration-records";
import { checkContext, checkTask } from "./context-safety";
import { type DelegationTargetInput, resolveDelegationTarget } from "./delegation-target";

export interface DelegationInput {
  target: DelegationTargetInput;
  task: string;
  sessionHandle: string;
  clientMessageId?: string | undefined;
  requestedTtlMinutes?: number | undefined;
  /** The client's conversation id, carried by the task invite and every reply; default the collaboration id. */
  correlationId?: string | undefined;
  context?: unknown;
}

interface Common {
  collaborationId: string;
  targetPrincipalId: string;
  clientMessageId: string;
  /** The id the task invite carries (the client's, else the collaboration's): echoed so a re-post may carry it or not. */
  correlationId: string;
}

/** 202: the target's owner has not allowed it (yet). */
export interface CollaborationRequested extends Common {
  status: "collaboration_requested";
  expiresAt: string;
  message: string;
}

/** 201: the task went out as a `task_invite` on a grant of its own. */
export interface Delegated extends Common {
  status: "delegated";
  communicationSessionId: string;
  messageId: string;
  deliveryId: string;
  duplicate: boolean;
  queuedAt: string;
}

export type DelegationAnswer = CollaborationRequested | Delegated;

/** The caller's own session, open: replies to the task come back to it. */
async function requireOpenSession(db: Kysely<Schema>, endpointId: string, handle: string): Promise<void> {
  const session = await findEndpointSession(db, endpointId, handle);
  if (!session || session.state === "closed") throw new ApiError(404, "session_not_found", `No open session ${handle} on this endpoint`);
}

const taskInvitePayload = (record: Pick<CollaborationRecord, "task" | "context">) => ({
  task: record.task,
  context: readContext(record.context),
});

/**
 * The correlation id the task invite carries: the one kept from the first post; in rows from before
 * it was kept, the re-post's, else the collaboration id.
 */
function correlationOf(record: Pick<CollaborationRecord, "id" | "correlation_id">, repost: string | undefined): string {
  return record.correlation_id ?? repost ?? record.id;
}

function requestedAnswer(record: CollaborationRecord, repostCorrelationId: string | undefined): CollaborationRequested {
  return {
    status: "collaboration_requested",
    collaborationId: record.id,
    targetPrincipalId: String(record.target_id),
    clientMessageId: record.client_message_id,
    correlationId: correlationOf(record, repostCorrelationId),
    expiresAt: record.expires_at,
    message: `Waiting for ${record.target_username} to allow this collaboration; send it again with the same clientMessageId`,
  };
}

function delegatedAnswer(record: Pick<CollaborationRecord, "id" | "target_id" | "client_message_id">, receipt: MessageReceipt): Delegated {
  return {
    status: "delegated",
    collaborationId: record.id,
    targetPrincipalId: String(record.target_id),
    clientMessageId: record.client_message_id,
    communicationSessionId: receipt.communicationSessionId,
    messageId: receipt.messageId,
    deliveryId: receipt.deliveryId,
    // Always set: the task invite was sent with one.
    correlationId: receipt.correlationId ?? record.id,
    duplicate: receipt.duplicate,
    queuedAt: receipt.queuedAt,
  };
}

/** Why a collaboration that is neither waiting nor allowed cannot carry the task. */
function endedError(status: "declined" | "expired"): ApiError {
  return status === "declined"
    ? forbidden("collaboration_declined", "The person declined this collaboration; a new clientMessageId asks again")
    : new ApiError(410, "collaboration_expired", "This collaboration expired before the task was sent; a new clientMessageId asks again");
}

/**
 * Opens the collaboration for a new clientMessageId: `requested` (the target hears
 * `collaboration.request` on their user stream), or `accepted` at once when the target always
 * allows this requester. A concurrent call with the same id makes only one.
 */
async function openCollaboration(
  context: AppContext,
  device: DevicePrincipal,
  fields: { targetId: number; clientMessageId: string; input: DelegationInput; ttlMinutes: number },
): Promise<void> {
  const { targetId, input } = fields;
  await inWriteUnit(context, undefined, async ({ tx, events }) => {
    const allowance = await tx
      .selectFrom("collaboration_allowances")
      .select("created_at")
      .where("owner_id", "=", targetId)
      .where("requester_id", "=", device.userId)
      .executeTakeFirst();
    const now = context.clock.iso();
    const id = newId("col");
    const expiresAt = collaborationExpiresAt(context.clock);
    const inserted = await tx
      .insertInto("collaborations")
      .values({
        id,
        requester_id: device.userId,
        requester_endpoint_id: device.credential.id,
        requester_session_handle: input.sessionHandle,
        target_id: targetId,
        client_message_id: fields.clientMessageId,
        task: input.task,
        context: storeContext(input.context),
        correlation_id: input.correlationId ?? id,
        requested_ttl_minutes: fields.ttlMinutes,
        status: allowance ? "accepted" : "requested",
        answer: allowance ? "always" : null,
        grant_id: null,
        message_id: null,
        created_at: now,
        expires_at: expiresAt,
        resolved_at: allowance ? now : null,
      })
      .onConflict((oc) => oc.columns(["requester_id", "client_message_id"]).doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!inserted) return;
    if (!allowance) {
      await events.appendToUserStream(tx, targetId, "collaboration.request", {
        collaborationId: id,
        requesterPrincipalId: String(device.userId),
        requesterUsername: device.username,
        clientMessageId: fields.clientMessageId,
        task: input.task,
        context: input.context ?? null,
        expiresAt,
      });
    }
    await recordAudit(tx, context.clock, {
      actor: device,
      action: "collaboration.request",
      objectType: "collaboration",
      objectId: id,
      parties: [device.userId, targetId],
      detail: { clientMessageId: fields.clientMessageId, alwaysAllowed: allowance !== undefined },
    });
  });
}

/**
 * Sends an allowed collaboration's task: an active grant from requester to target, frozen on the
 * target's default route as it is now, and a `task_invite` on it (one credit), committed together
 * with the collaboration becoming `delegated`. If the route is missing or offline, or credit is
 * short, nothing is written and the collaboration stays allowed for the next try.
 */
async function deliver(
  context: AppContext,
  device: DevicePrincipal,
  targetId: number,
  collaborationId: string,
  repostCorrelationId: string | undefined,
): Promise<Delegated> {
  return inWriteUnit(context, undefined, async (unit) => {
    const { tx } = unit;
    // The permission was checked before this transaction; a withdrawal may have committed since.
    // Checked again under the pair lock (taken first, as a withdrawal takes it), so the grant
    // opened here either exists before the withdrawal looks for grants to end, or never.
    const permitted = await permittedUnderLock(context, tx, { requesterId: device.userId, recipientId: targetId });
    // Locked, so two concurrent retries send the task once.
    const record = await tx
      .selectFrom("collaborations")
      .selectAll()
      .where("id", "=", collaborationId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (record.status === "delegated") {
      const message = await findMessage(tx, record.message_id as string);
      if (!message) throw new Error(`collaboration ${record.id} names a missing message`);
      return delegatedAnswer(record, toReceipt(message, true));
    }
    if (record.status === "declined" || record.status === "expired") throw endedError(record.status);
    if (!permitted) throw forbidden("agent_permission_required", "This person no longer gives you agent access");
    const grant = await openActiveGrant(
      context,
      device,
      {
        requesterId: record.requester_id,
        recipientId: record.target_id,
        requesterDeviceId: device.credential.deviceId,
        replyEndpointId: record.requester_endpoint_id,
        replySessionHandle: record.requester_session_handle,
        ttlMinutes: record.requested_ttl_minutes,
        targetOfferId: record.id,
      },
      unit,
    );
    const receipt = await sendMessage(
      context,
      device,
      {
        communicationSessionId: grant.commSessionId,
        clientMessageId: record.client_message_id,
        kind: "task_invite",
        payload: taskInvitePayload(record),
        replyTo: null,
        correlationId: correlationOf(record, repostCorrelationId),
      },
      unit,
    );
    await tx
      .updateTable("collaborations")
      .set({ status: "delegated", grant_id: grant.commSessionId, message_id: receipt.messageId })
      .where("id", "=", record.id)
      .execute();
    await recordAudit(tx, context.clock, {
      actor: device,
      action: "collaboration.delegate",
      objectType: "collaboration",
      objectId: record.id,
      parties: [record.requester_id, record.target_id],
      detail: { communicationSessionId: grant.commSessionId, messageId: receipt.messageId },
    });
    return delegatedAnswer(record, receipt);
  });
}

/**
 * Whether a post with a clientMessageId already used asks for something else: what identifies the
 * task (target and task; the caller and clientMessageId found the record) must be the same, and so
 * must a context or correlationId the post carries. Bridges re-post what they stored from the
 * answer, which may lack those two: left out, the first post's stand, as do its session and TTL.
 * Answers the field that differs, or null.
 */
function repostDiffers(record: CollaborationRecord, targetId: number, input: DelegationInput): string | null {
  if (record.target_id !== targetId) return "target";
  if (record.task !== input.task) return "task";
  if (input.context !== undefined && canonicalHash(input.context) !== canonicalHash(readContext(record.context))) return "context";
  if (input.correlationId !== undefined && record.correlation_id !== null && input.correlationId !== record.correlation_id) {
    return "correlationId";
  }
  return null;
}

/**
 * `POST /local-agent/delegations`. The first call with a clientMessageId asks the target's owner
 * (202); repeating it answers 202 until they allow it, then sends the task once (201) and repeats
 * that receipt with `duplicate: true`. A new clientMessageId is a new request. Every answer names
 * the correlationId the task invite carries.
 */
export async function delegate(context: AppContext, device: DevicePrincipal, input: DelegationInput): Promise<DelegationAnswer> {
  const { db } = context;
  const taskCheck = checkTask(input.task);
  if (!taskCheck.safe) throw badRequest("unsafe_task", taskCheck.reason);
  if (input.context !== undefined) {
    const check = checkContext(input.context);
    if (!check.safe) throw badRequest("unsafe_context", check.reason);
  }
  await requireOpenSession(db, device.credential.id, input.sessionHandle);
  const targetId = await resolveDelegationTarget(db, device.userId, input.target);
  // The task invite must fit a message; better to say so now than after the owner said yes.
  serializePayload(taskInvitePayload({ task: input.task, context: storeContext(input.context) }));
  const ttlMinutes = grantTtlMinutes(input.requestedTtlMinutes);
  const clientMessageId = input.clientMessageId ?? newId("dlg");
  const find = () =>
    selectCollaborations(db)
      .where("c.requester_id", "=", device.userId)
      .where("c.client_message_id", "=", clientMessageId)
      .executeTakeFirst();
  let record = await find();
  if (!record) {
    await openCollaboration(context, device, { targetId, clientMessageId, input, ttlMinutes });
    record = (await find()) as CollaborationRecord;
  }
  const differs = repostDiffers(record, targetId, input);
  if (differs) {
    throw conflict("client_message_id_conflict", `This clientMessageId was already used for a different delegation (another ${differs})`);
  }
  record = await settleCollaboration(context, record);
  switch (record.status) {
    case "requested":
      return requestedAnswer(record, input.correlationId);
    case "declined":
    case "expired":
      throw endedError(record.status);
    default:
      return deliver(context, device, targetId, record.id, input.correlationId);
  }
}
