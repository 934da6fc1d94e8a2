import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { areConnected, requireAgentPermission } from "../../people/network/permissions";
import { connectedPersonNotFound, resolvePerson } from "../runtime/resolve-person";

/** A handle (`bob`, `@bob`, `bob_coo`, a principal id) or an explicit `{principalId}`. */
export type DelegationTargetInput = string | { principalId: string };

async function connectedById(db: Kysely<Schema>, callerId: number, principalId: string): Promise<number> {
  const user = await db.selectFrom("users").select("id").where("id", "=", Number(principalId)).executeTakeFirst();
  if (!user || !(await areConnected(db, callerId, user.id))) throw connectedPersonNotFound(principalId);
  return user.id;
}

/**
 * The person a delegation goes to: someone already connected to the caller (else 404
 * `person_not_found`, whether or not they exist) who has given the caller agent access (else 403
 * `agent_permission_required`). Checked on every call, so a withdrawn permission stops a
 * delegation that is still waiting.
 */
export async function resolveDelegationTarget(db: Kysely<Schema>, callerId: number, target: DelegationTargetInput): Promise<number> {
  const targetId =
    typeof target === "string" ? (await resolvePerson(db, callerId, target)).userId : await connectedById(db, callerId, target.principalId);
  await requireAgentPermission(db, targetId, callerId);
  return targetId;
}
