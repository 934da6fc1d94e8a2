import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";
import * as accountsAndFolders from "./0001-accounts-and-folders";
import * as documents from "./0002-documents";
import * as notes from "./0003-notes";
import * as snapshots from "./0004-snapshots";
import * as search from "./0005-search";
import * as folderShares from "./0006-folder-shares";
import * as todos from "./0007-todos";
import * as delegation from "./0008-delegation";
import * as pairingPurpose from "./0009-pairing-purpose";
import * as documentOwnership from "./0010-document-ownership";
import * as snapshotRetention from "./0011-snapshot-retention";
import * as delegationHardening from "./0012-delegation-hardening";
import * as creditAllowance from "./0014-credit-allowance";
import * as todosPerOwner from "./0015-todos-per-owner";
import * as agentConversations from "./0016-agent-conversations";
import * as modelUsage from "./0017-model-usage";
import * as briefings from "./0018-briefings";
import * as searchRanking from "./0019-search-ranking";
import * as heartbeat from "./0020-heartbeat";
import * as tools from "./0021-tools";
import * as oauth from "./0022-oauth";
import * as mcpServers from "./0023-mcp-servers";
import * as messaging from "./0024-messaging";
import * as shareLinks from "./0025-share-links";
import * as team from "./0026-team";
import * as messageIdsPerSender from "./0027-message-ids-per-sender";
import * as signInFailures from "./0028-sign-in-failures";
import * as heartbeatCredential from "./0029-heartbeat-credential";
import * as linkBornContacts from "./0030-link-born-contacts";
import * as bridgeClients from "./0031-bridge-clients";
import * as messageRequests from "./0032-message-requests";
import * as instances from "./0033-instances";
import * as titleOnlyNotes from "./0034-title-only-notes";
import * as webhooks from "./0035-webhooks";
import * as managedAgents from "./0036-managed-agents";
import * as escalations from "./0037-escalations";
import * as metering from "./0038-metering";
import * as rawMemory from "./0039-raw-memory";
import { type Dialect, type MigrationContext, migrationContext } from "./migration-context";

interface VersionedMigration {
  up(db: Kysely<unknown>, context: MigrationContext): Promise<void>;
}

/** Every migration, in order. Names sort; never rename or edit one that has shipped. */
const MIGRATIONS: Record<string, VersionedMigration> = {
  "0001-accounts-and-folders": accountsAndFolders,
  "0002-documents": documents,
  "0003-notes": notes,
  "0004-snapshots": snapshots,
  "0005-search": search,
  "0006-folder-shares": folderShares,
  "0007-todos": todos,
  "0008-delegation": delegation,
  "0009-pairing-purpose": pairingPurpose,
  "0011-snapshot-retention": snapshotRetention,
  "0010-document-ownership": documentOwnership,
  "0012-delegation-hardening": delegationHardening,
  "0014-credit-allowance": creditAllowance,
  "0015-todos-per-owner": todosPerOwner,
  "0016-agent-conversations": agentConversations,
  "0017-model-usage": modelUsage,
  "0018-briefings": briefings,
  "0019-search-ranking": searchRanking,
  "0020-heartbeat": heartbeat,
  "0021-tools": tools,
  "0022-oauth": oauth,
  "0023-mcp-servers": mcpServers,
  "0024-messaging": messaging,
  "0025-share-links": shareLinks,
  "0026-team": team,
  "0027-message-ids-per-sender": messageIdsPerSender,
  "0028-sign-in-failures": signInFailures,
  "0029-heartbeat-credential": heartbeatCredential,
  "0030-link-born-contacts": linkBornContacts,
  "0031-bridge-clients": bridgeClients,
  "0032-message-requests": messageRequests,
  "0033-instances": instances,
  "0034-title-only-notes": titleOnlyNotes,
  "0035-webhooks": webhooks,
  "0036-managed-agents": managedAgents,
  "0037-escalations": escalations,
  "0038-metering": metering,
  "0039-raw-memory": rawMemory,
};

class StaticMigrationProvider implements MigrationProvider {
  constructor(private readonly context: MigrationContext) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(
      Object.entries(MIGRATIONS).map(([name, migration]) => [name, { up: (db: Kysely<unknown>) => migration.up(db, this.context) }]),
    );
  }
}

async function currentSchema(db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error("PostgreSQL has no current schema: check search_path");
  return schema;
}

/** Brings the schema up to date; safe to run from several processes at once (Kysely locks). */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(migrationContext(dialect)),
    migrationTableName: "schema_migrations",
    migrationLockTableName: "schema_migrations_lock",
    // Kysely looks for its tables in every schema unless told which one: with several schemas in one
    // database (tests, or installs sharing a cluster) it would find another schema's lock table and
    // skip creating ours. Name the schema the connection actually writes to.
    migrationTableSchema: dialect === "postgres" ? await currentSchema(db) : undefined,
  });
  // Kysely looks for its tables by listing every schema's columns: a schema dropped meanwhile (another
  // install's, or a test's) fails that listing with 3F000 invalid_schema_name. Listing again succeeds.
  let outcome = await migrator.migrateToLatest();
  for (let attempt = 1; attempt < 3 && (outcome.error as { code?: string } | undefined)?.code === "3F000"; attempt++) {
    outcome = await migrator.migrateToLatest();
  }
  const { error, results } = outcome;
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

export type { Dialect } from "./migration-context";
