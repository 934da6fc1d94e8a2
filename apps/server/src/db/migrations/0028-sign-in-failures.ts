import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Password sign-in limits in the database (issue 23), so every server instance counts the same
 * failures and a restart forgets none (`auth/sign-in-limits.ts`, docs/oauth.md).
 *
 * - `sign_in_counts`: a fixed-window counter per `scope` (`pair`: account and address; `address`;
 *   `account`) and `key`. `window_started_at` resets with the window; `last_at` is the latest
 *   counted attempt and `previous_at` the one before it (the slowdown paces from it).
 * - `sign_in_addresses`: where each account last signed in successfully, and when; such an
 *   address is never locked out of that account by failures from elsewhere.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  await db.schema
    .createTable("sign_in_counts")
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull())
    .addColumn("window_started_at", "text", (c) => c.notNull())
    .addColumn("last_at", "text", (c) => c.notNull())
    .addColumn("previous_at", "text")
    .addPrimaryKeyConstraint("sign_in_counts_pk", ["scope", "key"])
    .execute();
  // Maintenance deletes counters whose window and pace are over.
  await db.schema.createIndex("sign_in_counts_by_time").on("sign_in_counts").column("last_at").execute();

  await db.schema
    .createTable("sign_in_addresses")
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("signed_in_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("sign_in_addresses_pk", ["user_id", "address"])
    .execute();
  await db.schema.createIndex("sign_in_addresses_by_time").on("sign_in_addresses").column("signed_in_at").execute();
}
