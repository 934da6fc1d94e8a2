import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

export async function up(db: Kysely<unknown>, { binaryType }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("documents")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("state", binaryType, (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
}
