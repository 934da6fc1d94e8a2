import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { areConnected, hasAgentPermission } from "../../people/network/permissions";

export interface ResolvedPerson {
  principalId: string;
  userId: number;
  username: string;
  name: string | null;
  agentAccess: { theyGaveYou: boolean; youGaveThem: boolean };
}

/** One answer for "no such person" and "not connected", so the route never tells who exists. */
const personNotFound = (handle: string) =>
  new ApiError(404, "person_not_found", `No connected person matches ${JSON.stringify(handle)}; connect first through /network/request`);

/** The same answer for a principal id given as such (a delegation target, a policy's peer). */
export const connectedPersonNotFound = (principalId: string | number) =>
  new ApiError(404, "person_not_found", `No connected person with principal id ${principalId}`);

/** The user id a principal id names (a decimal string), or null when the text cannot be one. */
export function parsePrincipalId(text: string): number | null {
  const id = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : null;
  return id !== null && Number.isSafeInteger(id) ? id : null;
}

/** `@bob`, `bob_coo` and `bob` all name bob; digits may also be a principal id. */
function candidateNames(handle: string): { username: string; id: number | null } {
  let name = handle.trim().toLowerCase();
  if (name.startsWith("@")) name = name.slice(1);
  if (name.endsWith("_coo")) name = name.slice(0, -"_coo".length);
  return { username: name, id: parsePrincipalId(name) };
}

/**
 * The principal a grant can target, among people already connected to the caller. A username
 * wins over a principal id when the handle could be either (usernames may be all digits).
 */
export async function resolvePerson(db: Kysely<Schema>, callerId: number, handle: string): Promise<ResolvedPerson> {
  const { username, id } = candidateNames(handle);
  const byName = await db.selectFrom("users").select(["id", "username", "name"]).where("username", "=", username).executeTakeFirst();
  const byId =
    id === null ? undefined : await db.selectFrom("users").select(["id", "username", "name"]).where("id", "=", id).executeTakeFirst();
  for (const person of [byName, byId]) {
    if (!person || !(await areConnected(db, callerId, person.id))) continue;
    return {
      principalId: String(person.id),
      userId: person.id,
      username: person.username,
      name: person.name,
      agentAccess: {
        theyGaveYou: await hasAgentPermission(db, person.id, callerId),
        youGaveThem: await hasAgentPermission(db, callerId, person.id),
      },
    };
  }
  throw personNotFound(handle);
}
