import type { ToolPolicy } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { Schema, ToolPoliciesTable } from "../../db/schema";
import { badRequest, notFound } from "../../http/errors";
import { areConnected } from "../../people/network/permissions";
import { grantNotFound } from "../grants";
import { connectedPersonNotFound } from "../runtime/resolve-person";
import { sessionNotFound } from "../runtime/sessions-service";

type PolicyRow = Selectable<ToolPoliciesTable>;

type Deps = Pick<AppContext, "db" | "clock">;

/** Every tool, on the owner's side; allowed only when narrowed to a grant or a peer. */
export const ANY_TOOL = "*";

export function toToolPolicy(row: PolicyRow): ToolPolicy {
  return {
    policyId: row.id,
    toolName: row.tool_name,
    communicationSessionId: row.grant_id,
    peerPrincipalId: row.peer_id === null ? null : String(row.peer_id),
    sessionHandle: row.session_handle,
    decision: row.decision,
    source: row.source,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** What a tool call is, as policies see it. */
export interface ToolCall {
  ownerId: number;
  toolName: string;
  grantId: string;
  peerId: number;
  sessionHandle: string | null;
}

/**
 * The first of the owner's live allow policies that covers the call: the tool by name (or `*`),
 * and each narrowing the policy has (grant, peer, session) equal to the call's. Deny is the
 * default, so a missing policy is the only way to deny.
 */
export async function findMatchingPolicy(db: Kysely<Schema>, call: ToolCall, nowIso: string): Promise<PolicyRow | undefined> {
  return db
    .selectFrom("tool_policies")
    .selectAll()
    .where("owner_id", "=", call.ownerId)
    .where("decision", "=", "allow")
    .where((eb) => eb.or([eb("tool_name", "=", call.toolName), eb("tool_name", "=", ANY_TOOL)]))
    .where((eb) => eb.or([eb("grant_id", "is", null), eb("grant_id", "=", call.grantId)]))
    .where((eb) => eb.or([eb("peer_id", "is", null), eb("peer_id", "=", call.peerId)]))
    .where((eb) =>
      call.sessionHandle === null
        ? eb("session_handle", "is", null)
        : eb.or([eb("session_handle", "is", null), eb("session_handle", "=", call.sessionHandle)]),
    )
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", nowIso)]))
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
}

export async function listToolPolicies({ db, clock }: Deps, ownerId: number): Promise<ToolPolicy[]> {
  const rows = await db
    .selectFrom("tool_policies")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", clock.iso())]))
    .orderBy("id")
    .execute();
  return rows.map(toToolPolicy);
}

export interface NewToolPolicy {
  toolName: string;
  communicationSessionId?: string;
  peerPrincipalId?: string;
  sessionHandle?: string;
  expiresAt?: string;
}

/** Checks that every narrowing names something of the owner's (another person's object is a 404). */
async function checkNarrowing({ db }: Deps, ownerId: number, input: NewToolPolicy): Promise<number | null> {
  let peerId = input.peerPrincipalId === undefined ? null : Number(input.peerPrincipalId);
  if (input.communicationSessionId !== undefined) {
    const grant = await db
      .selectFrom("grants")
      .select(["requester_id"])
      .where("id", "=", input.communicationSessionId)
      .where("recipient_id", "=", ownerId)
      .executeTakeFirst();
    if (!grant) throw grantNotFound(input.communicationSessionId);
    if (peerId !== null && peerId !== grant.requester_id) {
      throw badRequest(
        "policy_mismatch",
        "peerPrincipalId is not the requester of that communication session; the policy could never apply",
      );
    }
    peerId ??= grant.requester_id;
  }
  if (peerId !== null && !(await areConnected(db, ownerId, peerId))) throw connectedPersonNotFound(peerId);
  if (input.sessionHandle !== undefined) {
    const session = await db
      .selectFrom("runtime_sessions")
      .select("handle")
      .where("handle", "=", input.sessionHandle)
      .where("owner_id", "=", ownerId)
      .executeTakeFirst();
    if (!session) throw sessionNotFound(input.sessionHandle);
  }
  return peerId;
}

export async function createToolPolicy(deps: Deps, owner: Principal, input: NewToolPolicy): Promise<ToolPolicy> {
  const { db, clock } = deps;
  if (input.toolName === ANY_TOOL && input.communicationSessionId === undefined && input.peerPrincipalId === undefined) {
    throw badRequest(
      "wildcard_policy_too_broad",
      "A policy for every tool (*) must name a communicationSessionId or a peerPrincipalId: a global * would let anyone you grant access run any tool on your machine",
    );
  }
  const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt).toISOString();
  if (expiresAt !== null && expiresAt <= clock.iso()) throw badRequest("invalid_expiry", "expiresAt must be in the future");
  const peerId = await checkNarrowing(deps, owner.userId, input);
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto("tool_policies")
      .values({
        owner_id: owner.userId,
        tool_name: input.toolName,
        grant_id: input.communicationSessionId ?? null,
        peer_id: peerId,
        session_handle: input.sessionHandle ?? null,
        decision: "allow",
        source: "owner",
        created_at: clock.iso(),
        expires_at: expiresAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, clock, {
      actor: owner,
      action: "tool_policy.create",
      objectType: "tool_policy",
      objectId: row.id,
      parties: [owner.userId, peerId],
      detail: { toolName: row.tool_name, grantId: row.grant_id, sessionHandle: row.session_handle, expiresAt },
    });
    return toToolPolicy(row);
  });
}

export async function deleteToolPolicy({ db, clock }: Deps, owner: Principal, policyId: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const row = await tx
      .deleteFrom("tool_policies")
      .where("id", "=", policyId)
      .where("owner_id", "=", owner.userId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound(`tool policy ${policyId}`);
    await recordAudit(tx, clock, {
      actor: owner,
      action: "tool_policy.delete",
      objectType: "tool_policy",
      objectId: row.id,
      parties: [owner.userId, row.peer_id],
      detail: { toolName: row.tool_name, grantId: row.grant_id, source: row.source },
    });
  });
}
