import type { Collaboration } from "@tandem/core";
import { recordAudit } from "../../audit/audit-log";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { conflict, notFound } from "../../http/errors";
import { inWriteUnit } from "../grants";
import { notifyRequester, notifyRequestingBridge } from "./collaboration-events";
import { expireDueCollaborations, settleCollaboration } from "./collaboration-expiry";
import { collaborationExpiresAt, findCollaboration, selectCollaborations, toCollaboration } from "./collaboration-records";

export type CollaborationDecision = "allow_once" | "always_allow" | "deny";

/**
 * The target's owner answers a waiting request. Allowing gives the requester's bridge another
 * 10 minutes to collect it (it re-posts every 10 s); `always_allow` also stores an allowance, so
 * this requester's later delegations skip the question. The requester hears `collaboration.accepted`
 * on their user stream; `deny` tells the bridge `collaboration.revoked`.
 */
export async function respondToCollaboration(
  context: AppContext,
  owner: UserPrincipal,
  collaborationId: string,
  decision: CollaborationDecision,
): Promise<Collaboration> {
  const found = await findCollaboration(context.db, collaborationId);
  if (!found || found.target_id !== owner.userId) throw notFound(`collaboration ${collaborationId}`);
  const record = await settleCollaboration(context, found);
  const refuse = (status: string) =>
    status === "expired"
      ? conflict("collaboration_expired", `Collaboration ${collaborationId} expired before it was answered`)
      : conflict("collaboration_already_answered", `Collaboration ${collaborationId} is already ${status}`);
  if (record.status !== "requested") throw refuse(record.status);
  await inWriteUnit(context, undefined, async ({ tx, events }) => {
    const now = context.clock.iso();
    const allowed = decision !== "deny";
    const result = await tx
      .updateTable("collaborations")
      .set({
        status: allowed ? "accepted" : "declined",
        answer: decision === "allow_once" ? "once" : decision === "always_allow" ? "always" : null,
        resolved_at: now,
        ...(allowed ? { expires_at: collaborationExpiresAt(context.clock) } : {}),
      })
      .where("id", "=", record.id)
      .where("status", "=", "requested")
      .executeTakeFirst();
    // A concurrent answer or expiry won; throwing rolls this one back.
    if (result.numUpdatedRows === 0n) throw refuse((await findCollaboration(tx, record.id))?.status ?? "gone");
    if (decision === "always_allow") {
      await tx
        .insertInto("collaboration_allowances")
        .values({ owner_id: owner.userId, requester_id: record.requester_id, created_at: now })
        .onConflict((oc) => oc.columns(["owner_id", "requester_id"]).doNothing())
        .execute();
      await recordAudit(tx, context.clock, {
        actor: owner,
        action: "collaboration_allowance.create",
        objectType: "collaboration_allowance",
        objectId: String(record.requester_id),
        parties: [owner.userId, record.requester_id],
        detail: { collaborationId: record.id },
      });
    }
    if (allowed) await notifyRequester(tx, events, record, "collaboration.accepted", { decision });
    else await notifyRequestingBridge(tx, events, record, "collaboration.revoked", { reason: "declined" });
    await recordAudit(tx, context.clock, {
      actor: owner,
      action: allowed ? "collaboration.accept" : "collaboration.decline",
      objectType: "collaboration",
      objectId: record.id,
      parties: [record.requester_id, owner.userId],
      detail: { decision },
    });
  });
  return toCollaboration((await findCollaboration(context.db, record.id)) ?? record);
}

/** Requests to the caller (to answer) and from the caller, newest first; passed expiries recorded first. */
export async function listCollaborations(
  context: AppContext,
  userId: number,
  filter: { status?: Collaboration["status"]; limit: number },
): Promise<{ incoming: Collaboration[]; outgoing: Collaboration[] }> {
  await expireDueCollaborations(context, userId);
  const list = async (side: "c.target_id" | "c.requester_id") => {
    let query = selectCollaborations(context.db)
      .where(side, "=", userId)
      .orderBy("c.created_at", "desc")
      .orderBy("c.id", "desc")
      .limit(filter.limit);
    if (filter.status !== undefined) query = query.where("c.status", "=", filter.status);
    return (await query.execute()).map(toCollaboration);
  };
  return { incoming: await list("c.target_id"), outgoing: await list("c.requester_id") };
}

export async function listAllowances(context: AppContext, ownerId: number) {
  const rows = await context.db
    .selectFrom("collaboration_allowances as a")
    .innerJoin("users as u", "u.id", "a.requester_id")
    .select(["a.requester_id", "u.username", "a.created_at"])
    .where("a.owner_id", "=", ownerId)
    .orderBy("a.created_at")
    .execute();
  return rows.map((row) => ({ principalId: String(row.requester_id), username: row.username, createdAt: row.created_at }));
}

/** Ends an "always allow": the person's next delegation asks again. */
export async function deleteAllowance(context: AppContext, owner: UserPrincipal, principalId: string): Promise<void> {
  const requesterId = Number(principalId);
  await context.db.transaction().execute(async (tx) => {
    const result = await tx
      .deleteFrom("collaboration_allowances")
      .where("owner_id", "=", owner.userId)
      .where("requester_id", "=", requesterId)
      .executeTakeFirst();
    if (result.numDeletedRows === 0n) throw notFound(`an always-allow for principal ${principalId}`);
    await recordAudit(tx, context.clock, {
      actor: owner,
      action: "collaboration_allowance.delete",
      objectType: "collaboration_allowance",
      objectId: principalId,
      parties: [owner.userId, requesterId],
    });
  });
}
