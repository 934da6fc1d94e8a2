import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Who set a heartbeat policy: the credential (API key or OAuth grant) of the last request that
 * changed the tier or the schedule, and the scopes it held then. Scheduled runs are capped to
 * those scopes and stop when the credential is revoked (issue #23, point 7). Policies stored before
 * this have no credential: their schedule stops at its next run, with the reason, until it is set
 * again.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  // One column per statement: SQLite adds one at a time.
  // `api_key` | `oauth`; null: not recorded (set before this migration).
  await db.schema.alterTable("heartbeat_policies").addColumn("set_by_kind", "text").execute();
  // The API key's id, or the OAuth grant's id.
  await db.schema.alterTable("heartbeat_policies").addColumn("set_by_id", "text").execute();
  // JSON array of the credential's `os.*` scopes when it set the policy.
  await db.schema.alterTable("heartbeat_policies").addColumn("set_by_scopes", "text").execute();
}
