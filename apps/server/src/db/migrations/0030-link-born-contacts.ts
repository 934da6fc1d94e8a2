import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Contacts and agent permissions made by redeeming a share link (`POST /network/connect`) record
 * the link: `share_link_id` on `contacts` and `contact_permissions` (null: the owner's own
 * decision, through the handshake). Such a row is bounded by its link and ends with it (revoked:
 * deleted at once; expired: no longer honoured, then swept; the link deleted: cascade).
 *
 * Rows made by a redemption before this migration are found again: the permission a link gave
 * carries the link's id in its JSON (`shareLink`), and the redemption wrote the pair's contact
 * rows in the same instant as that permission.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  for (const table of ["contacts", "contact_permissions"]) {
    await db.schema
      .alterTable(table)
      .addColumn("share_link_id", "bigint", (c) => c.references("share_links.id").onDelete("cascade"))
      .execute();
    await db.schema.createIndex(`${table}_by_share_link`).on(table).column("share_link_id").execute();
  }
  await bindEarlierRedemptions(db);
}

/** Finds the rows earlier redemptions made (see above) and records their link on them. */
export async function bindEarlierRedemptions(db: Kysely<unknown>): Promise<void> {
  const typed = db as Kysely<Backfill>;
  const permissions = await typed
    .selectFrom("contact_permissions")
    .select(["grantor_id", "grantee_id", "permissions", "created_at"])
    .execute();
  for (const row of permissions) {
    const linkId = linkIdOf(row.permissions);
    if (linkId === null) continue;
    const link = await typed
      .selectFrom("share_links")
      .select("id")
      .where("id", "=", linkId)
      .where("owner_id", "=", row.grantor_id)
      .executeTakeFirst();
    if (!link) continue;
    await typed
      .updateTable("contact_permissions")
      .set({ share_link_id: linkId })
      .where("grantor_id", "=", row.grantor_id)
      .where("grantee_id", "=", row.grantee_id)
      .execute();
    await typed
      .updateTable("contacts")
      .set({ share_link_id: linkId })
      .where((eb) =>
        eb.or([
          eb.and([eb("user_id", "=", row.grantor_id), eb("contact_id", "=", row.grantee_id)]),
          eb.and([eb("user_id", "=", row.grantee_id), eb("contact_id", "=", row.grantor_id)]),
        ]),
      )
      .where("created_at", "=", row.created_at)
      .execute();
  }
}

function linkIdOf(json: string): number | null {
  try {
    const id = (JSON.parse(json) as { shareLink?: unknown }).shareLink;
    return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : null;
  } catch {
    return null;
  }
}

/** The tables as this migration sees them (the schema of its time, not today's). */
interface Backfill {
  contacts: { user_id: number; contact_id: number; created_at: string; share_link_id: number | null };
  contact_permissions: { grantor_id: number; grantee_id: number; permissions: string; created_at: string; share_link_id: number | null };
  share_links: { id: number; owner_id: number };
}
