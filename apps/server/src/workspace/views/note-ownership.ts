import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";

/** Uuids per statement: well below every dialect's limit on bound parameters. */
const CHUNK = 500;

/**
 * Records `ownerId` as the owner of each note uuid nobody owns yet, and answers which of `uuids`
 * this user owns. A note belongs to the user whose workspace listed it first, for good: listing
 * another user's uuid in one's own workspace (anyone who could read the note has seen it) claims
 * nothing, also after the owner deletes it.
 */
export async function claimNotes(db: Kysely<Schema>, ownerId: number, uuids: readonly string[]): Promise<Set<string>> {
  const owned = new Set<string>();
  for (let start = 0; start < uuids.length; start += CHUNK) {
    const chunk = uuids.slice(start, start + CHUNK);
    await db
      .insertInto("note_owners")
      .values(chunk.map((uuid) => ({ uuid, owner_id: ownerId })))
      .onConflict((oc) => oc.column("uuid").doNothing())
      .execute();
    const rows = await db.selectFrom("note_owners").select("uuid").where("uuid", "in", chunk).where("owner_id", "=", ownerId).execute();
    for (const row of rows) owned.add(row.uuid);
  }
  return owned;
}

/** The owner of a note uuid, if any workspace has listed it. */
export async function noteOwner(db: Kysely<Schema>, uuid: string): Promise<number | undefined> {
  const row = await db.selectFrom("note_owners").select("owner_id").where("uuid", "=", uuid).executeTakeFirst();
  return row ? Number(row.owner_id) : undefined;
}
