import type { Kysely } from "kysely";

/**
 * Unsent messages typed in the Inbox and to the Agent (see drafts/drafts.ts): one row per account,
 * section and conversation, so what was typed survives a reload and a restart until it is sent.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("drafts")
    .addColumn("account", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("conversation", "text", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("revision", "integer", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("drafts_pk", ["account", "scope", "conversation"])
    .execute();
}
