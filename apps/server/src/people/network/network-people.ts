import type { NetworkPerson } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";

export interface PersonRow {
  id: number;
  username: string;
  name: string | null;
}

/** A person as network bodies show them: the id in principal-id form, a name that is never empty. */
export function toNetworkPerson(row: PersonRow): NetworkPerson {
  return { userId: String(row.id), username: row.username, name: row.name ?? row.username };
}

/** The people with these ids, by id. */
export async function loadPeople(db: Kysely<Schema>, ids: Iterable<number>): Promise<Map<number, NetworkPerson>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom("users").select(["id", "username", "name"]).where("id", "in", unique).execute();
  return new Map(rows.map((row) => [row.id, toNetworkPerson(row)]));
}
