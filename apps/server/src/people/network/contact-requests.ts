import type { ContactPermissions, ContactRequestType, NetworkPerson } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { ContactRequestsTable, Schema } from "../../db/schema";
import { ApiError, badRequest, conflict } from "../../http/errors";
import { findUserByUsername } from "../users/users-service";
import { parseNetworkAddress } from "./network-address";
import { loadPeople, toNetworkPerson } from "./network-people";
import { lockPair } from "./pair-lock";
import { areFriends, hasAgentPermission } from "./permissions";

type Deps = Pick<AppContext, "db" | "database" | "clock">;
type RequestRow = Selectable<ContactRequestsTable>;

const requestNotFound = (requestId: number) =>
  new ApiError(404, "request_not_found", `Request ${requestId} not found among the requests sent to you or by you`);

const describeType = (type: ContactRequestType) => (type === "agent" ? "agent-access" : "contact");

function pendingRequest(db: Kysely<Schema>, from: number, to: number, type: ContactRequestType): Promise<RequestRow | undefined> {
  return db
    .selectFrom("contact_requests")
    .selectAll()
    .where("from_user_id", "=", from)
    .where("to_user_id", "=", to)
    .where("type", "=", type)
    .where("status", "=", "pending")
    .executeTakeFirst();
}

/**
 * Makes two people contacts: one row per direction, kept if they already exist. Rows a share link
 * made become the people's own (no longer bound to the link): the handshake is their decision.
 */
export async function befriend(db: Kysely<Schema>, a: number, b: number, at: string): Promise<void> {
  await db
    .insertInto("contacts")
    .values([
      { user_id: a, contact_id: b, created_at: at },
      { user_id: b, contact_id: a, created_at: at },
    ])
    .onConflict((oc) => oc.columns(["user_id", "contact_id"]).doUpdateSet({ share_link_id: null }))
    .execute();
}

export interface SentRequest {
  requestId: number;
  type: ContactRequestType;
  status: "pending" | "accepted";
  to: NetworkPerson;
  message: string;
}

/**
 * `to: "bob"` asks bob to be contacts; `to: "bob_coo"` asks bob to let the caller's agent reach
 * his. A friend request crossing one bob already sent the caller accepts his: both want it.
 */
export async function sendContactRequest(deps: Deps, actor: Principal, to: string): Promise<SentRequest> {
  const { username, type } = parseNetworkAddress(to);
  const target = username === "" ? undefined : await findUserByUsername(deps.db, username);
  if (!target) throw new ApiError(404, "user_not_found", `No user named "${username}"`);
  if (target.id === actor.userId) throw badRequest("cannot_connect_to_self", "You cannot send a network request to yourself");
  const person = toNetworkPerson(target);
  const me = actor.userId;

  return deps.db.transaction().execute(async (tx) => {
    await lockPair(tx, deps.database.dialect, me, target.id);
    const now = deps.clock.iso();
    if (type === "friend") {
      if (await areFriends(tx, me, target.id)) throw conflict("already_connected", `You and ${target.username} are already contacts`);
    } else if (await hasAgentPermission(tx, target.id, me)) {
      throw conflict("already_connected", `${target.username} has already given your agent access`);
    }
    const mine = await pendingRequest(tx, me, target.id, type);
    if (mine)
      throw conflict("already_pending", `Your ${describeType(type)} request to ${target.username} is already pending (request ${mine.id})`);

    const theirs = type === "friend" ? await pendingRequest(tx, target.id, me, "friend") : undefined;
    if (theirs) {
      await tx.updateTable("contact_requests").set({ status: "accepted", resolved_at: now }).where("id", "=", theirs.id).execute();
      await befriend(tx, me, target.id, now);
      await recordAudit(tx, deps.clock, {
        actor,
        action: "network.request.accept",
        objectType: "contact_request",
        objectId: theirs.id,
        parties: [target.id, me],
        detail: { type, reason: "crossing_request" },
      });
      return {
        requestId: theirs.id,
        type,
        status: "accepted",
        to: person,
        message: `${target.username} had already asked you; you are now contacts`,
      };
    }

    const inserted = await tx
      .insertInto("contact_requests")
      .values({ from_user_id: me, to_user_id: target.id, type, status: "pending", created_at: now, resolved_at: null })
      .returning("id")
      .executeTakeFirstOrThrow();
    await recordAudit(tx, deps.clock, {
      actor,
      action: "network.request.send",
      objectType: "contact_request",
      objectId: inserted.id,
      parties: [me, target.id],
      detail: { type },
    });
    return {
      requestId: inserted.id,
      type,
      status: "pending",
      to: person,
      message: `Sent ${target.username} a${type === "agent" ? "n" : ""} ${describeType(type)} request`,
    };
  });
}

export interface PendingRequests {
  incoming: { requestId: number; type: ContactRequestType; from: NetworkPerson; createdAt: string }[];
  outgoing: { requestId: number; type: ContactRequestType; to: NetworkPerson; createdAt: string }[];
}

/** Pending requests to and from a person, newest first. */
export async function listPendingRequests(db: Kysely<Schema>, userId: number): Promise<PendingRequests> {
  const rows = await db
    .selectFrom("contact_requests")
    .selectAll()
    .where("status", "=", "pending")
    .where((eb) => eb.or([eb("to_user_id", "=", userId), eb("from_user_id", "=", userId)]))
    .orderBy("id", "desc")
    .execute();
  const people = await loadPeople(
    db,
    rows.map((row) => (row.to_user_id === userId ? row.from_user_id : row.to_user_id)),
  );
  const result: PendingRequests = { incoming: [], outgoing: [] };
  for (const row of rows) {
    const common = { requestId: row.id, type: row.type, createdAt: row.created_at };
    const incoming = row.to_user_id === userId;
    const other = people.get(incoming ? row.from_user_id : row.to_user_id);
    if (!other) continue;
    if (incoming) result.incoming.push({ ...common, from: other });
    else result.outgoing.push({ ...common, to: other });
  }
  return result;
}

/**
 * Reads a request for a change by `userId` on the given side, locks the pair, and reads it again
 * under the lock, so the status checked is the one the change applies to.
 */
async function lockedRequest(
  tx: Kysely<Schema>,
  deps: Deps,
  requestId: number,
  side: "from_user_id" | "to_user_id",
  userId: number,
): Promise<RequestRow> {
  const first = await tx.selectFrom("contact_requests").selectAll().where("id", "=", requestId).executeTakeFirst();
  if (!first || first[side] !== userId) throw requestNotFound(requestId);
  await lockPair(tx, deps.database.dialect, first.from_user_id, first.to_user_id);
  return tx.selectFrom("contact_requests").selectAll().where("id", "=", requestId).executeTakeFirstOrThrow();
}

const alreadyResolved = (row: RequestRow) =>
  conflict("request_already_resolved", `Request ${row.id} is no longer pending: it was ${row.status}`);

export interface ResolveInput {
  requestId: number;
  type: ContactRequestType;
  action: "accept" | "decline";
  permissions?: ContactPermissions | null;
}

export interface ResolvedRequest {
  requestId: number;
  type: ContactRequestType;
  status: "accepted" | "declined";
  from: NetworkPerson;
  permissions?: ContactPermissions;
  message: string;
}

/**
 * The recipient accepts or declines. Accepting a friend request makes both contacts; accepting
 * an agent request creates the permission from the accepter to the requester, holding the
 * capabilities the accepter chose. That permission is the only thing grants accept as authority.
 * It replaces one a share link made: the accepter's decision stands on its own, unbound by a link.
 */
export async function resolveContactRequest(deps: Deps, actor: Principal, input: ResolveInput): Promise<ResolvedRequest> {
  const me = actor.userId;
  return deps.db.transaction().execute(async (tx) => {
    const row = await lockedRequest(tx, deps, input.requestId, "to_user_id", me);
    if (row.status === "withdrawn") throw requestNotFound(row.id);
    if (row.type !== input.type) {
      throw badRequest(
        "request_type_mismatch",
        `Request ${row.id} is a${row.type === "agent" ? "n agent" : " friend"} request, not ${input.type}`,
      );
    }
    if (row.status !== "pending") throw alreadyResolved(row);
    const requester = (await loadPeople(tx, [row.from_user_id])).get(row.from_user_id);
    if (!requester) throw requestNotFound(row.id);

    const now = deps.clock.iso();
    const status = input.action === "accept" ? "accepted" : "declined";
    await tx.updateTable("contact_requests").set({ status, resolved_at: now }).where("id", "=", row.id).execute();
    let permissions: ContactPermissions | undefined;
    if (status === "accepted" && row.type === "friend") {
      await befriend(tx, me, row.from_user_id, now);
    } else if (status === "accepted") {
      permissions = input.permissions ?? {};
      const json = JSON.stringify(permissions);
      await tx
        .insertInto("contact_permissions")
        .values({ grantor_id: me, grantee_id: row.from_user_id, permissions: json, created_at: now, updated_at: now })
        .onConflict((oc) =>
          oc.columns(["grantor_id", "grantee_id"]).doUpdateSet({ permissions: json, updated_at: now, share_link_id: null }),
        )
        .execute();
    }
    await recordAudit(tx, deps.clock, {
      actor,
      action: `network.request.${input.action}`,
      objectType: "contact_request",
      objectId: row.id,
      parties: [row.from_user_id, me],
      detail: permissions ? { type: row.type, permissions } : { type: row.type },
    });
    const message =
      status === "declined"
        ? `Declined ${requester.username}'s ${describeType(row.type)} request`
        : row.type === "friend"
          ? `You and ${requester.username} are now contacts`
          : `${requester.username}'s agent may now ask yours, within the permissions you set`;
    return { requestId: row.id, type: row.type, status, from: requester, ...(permissions ? { permissions } : {}), message };
  });
}

/** The sender takes back a request that is still pending. */
export async function withdrawContactRequest(
  deps: Deps,
  actor: Principal,
  requestId: number,
): Promise<{ requestId: number; type: ContactRequestType; status: "withdrawn"; message: string }> {
  return deps.db.transaction().execute(async (tx) => {
    const row = await lockedRequest(tx, deps, requestId, "from_user_id", actor.userId);
    if (row.status !== "pending") throw alreadyResolved(row);
    await tx.updateTable("contact_requests").set({ status: "withdrawn", resolved_at: deps.clock.iso() }).where("id", "=", row.id).execute();
    await recordAudit(tx, deps.clock, {
      actor,
      action: "network.request.withdraw",
      objectType: "contact_request",
      objectId: row.id,
      parties: [actor.userId, row.to_user_id],
      detail: { type: row.type },
    });
    return { requestId: row.id, type: row.type, status: "withdrawn", message: `Withdrew your ${describeType(row.type)} request` };
  });
}
