import { type Kysely, sql } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * The server's team: one per install (docs/team.md).
 *
 * - `team_settings`: the one row (id 1) with the team's name and its seats (null: the server's
 *   configured default, TANDEM_TEAM_SEATS; 0: unlimited, set over a limited default). Transactions that change membership lock this row,
 *   so two invites can never both take the last seat.
 * - `team_members`: who is on the team and with which role. The owner is the server's first
 *   account; a partial unique index keeps it to one.
 * - `team_invites`: single-use invites. The id is public (lists, revoking); only a SHA-256 hash of
 *   the secret is stored. `email` binds the invite to the one account with that email.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  await db.schema
    .createTable("team_settings")
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("seats", "integer")
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db
    .insertInto("team_settings" as never)
    .values({ id: 1, name: "Team", seats: null, updated_at: new Date().toISOString() } as never)
    .execute();

  await db.schema
    .createTable("team_members")
    .addColumn("user_id", "bigint", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
    .addColumn("invited_by", "bigint", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("joined_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("team_members_one_owner")
    .unique()
    .on("team_members")
    .column("role")
    .where(sql.ref("role"), "=", "owner")
    .execute();

  await db.schema
    .createTable("team_invites")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('admin', 'member')`))
    .addColumn("email", "text")
    .addColumn("invited_by", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("accepted_at", "text")
    .addColumn("accepted_by", "bigint", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("revoked_at", "text")
    .execute();
  await db.schema.createIndex("team_invites_by_inviter").on("team_invites").columns(["invited_by", "created_at"]).execute();
  // Maintenance deletes invites long expired.
  await db.schema.createIndex("team_invites_by_expiry").on("team_invites").column("expires_at").execute();
}
