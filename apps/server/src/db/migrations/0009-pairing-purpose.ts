import type { Kysely } from "kysely";

/**
 * A device-code pairing either pairs a bridge (a device token for a runtime endpoint) or signs an
 * app in (an API key for its owner's notes and todos); existing pairings were all bridges.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("device_pairings")
    .addColumn("purpose", "text", (c) => c.notNull().defaultTo("bridge"))
    .execute();
}
