import { type Kysely, type Migration, type MigrationProvider, Migrator } from "kysely";
import * as localTables from "./0001-local-tables";
import * as bridgeGuestAnswers from "./0002-bridge-guest-answers";
import * as drafts from "./0003-drafts";

/** Every migration of the local database, in order. Names sort; never rename or edit one that has shipped. */
const MIGRATIONS: Record<string, Migration> = {
  "0001-local-tables": localTables,
  "0002-bridge-guest-answers": bridgeGuestAnswers,
  "0003-drafts": drafts,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Brings the local database's schema up to date. */
export async function migrateLocalStore(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: "schema_migrations",
    migrationLockTableName: "schema_migrations_lock",
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
