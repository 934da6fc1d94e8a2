import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { Sqlite3Dialect } from "@tandem/kysely-sqlite3";
import { Kysely, sql } from "kysely";
import { CurrentSchemaPostgresDialect } from "./current-schema-postgres";
import { type Dialect, migrateToLatest } from "./migrations";
import type { Schema } from "./schema";
import { nodeSqlite, SyncReads, SyncReadsDialect } from "./sync-reads";

export type { Dialect };

export interface Database {
  readonly db: Kysely<Schema>;
  /**
   * For short reads outside a transaction on the hot request path (a credential's row, a
   * listing): on SQLite a read-only connection that answers on the event loop's thread without a
   * trip through the thread pool (`sync-reads.ts`); on PostgreSQL, and on a Node without
   * `node:sqlite`, the same as `db`. Never for writes or long scans.
   */
  readonly reads: Kysely<Schema>;
  /**
   * The connection behind `reads` on SQLite, for the hottest reads to call without Kysely's
   * executor ({@link SyncReads.rowsNow}; when it answers undefined, read through `reads`).
   * Undefined where `reads` is `db`.
   */
  readonly readsNow?: SyncReads;
  readonly dialect: Dialect;
  /** Where the data lives, for logs: a file path or a URL without its password. */
  readonly location: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Directory of the embedded SQLite database (`tandem.sqlite`). */
  readonly dataDir: string;
  /** A `postgres://` URL; when set, PostgreSQL is used instead of SQLite. */
  readonly databaseUrl?: string;
  /**
   * Whether a database that does not exist yet (no SQLite file, or a PostgreSQL schema without
   * Tandem's tables) may be created; otherwise opening it fails with {@link DatabaseNotFoundError}.
   * Default true (the server creates its storage on first start).
   */
  readonly create?: boolean;
}

/** The configured storage holds no Tandem database, and creating one was not allowed. */
export class DatabaseNotFoundError extends Error {
  override name = "DatabaseNotFoundError";
  constructor(readonly location: string) {
    super(`no Tandem database at ${location}`);
  }
}

/** Whether Tandem's migrations ever ran in the schema this connection writes to. */
async function hasTandemTables(db: Kysely<Schema>): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`select to_regclass('schema_migrations') is not null as present`.execute(db);
  return rows[0]?.present === true;
}

const INT8_OID = 20;

/** Query parameters of a connection URL that may hold a secret: `password`, `sslpassword`, and the like. */
const SECRET_PARAMETER = /pass|secret|token|key/i;

/** The URL with every credential in it (`user:password@`, secret query parameters) shown as `***`. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    for (const name of new Set(parsed.searchParams.keys())) {
      if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, "***");
    }
    return parsed.toString();
  } catch {
    // Nothing of a URL we cannot take apart is shown: it might all be secret.
    return "postgres";
  }
}

/** Opens the configured database and migrates it to the latest schema. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  let db: Kysely<Schema>;
  let dialect: Dialect;
  let location: string;
  if (options.databaseUrl) {
    // Loaded only for PostgreSQL: a server on SQLite never needs the driver.
    const { default: pg } = await import("pg");
    const types = {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        // ids and counts are int8; they stay far below 2^53, so read them as numbers.
        oid === INT8_OID
          ? (value: string) => Number.parseInt(value, 10)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    };
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10, types });
    // An idle client that loses its connection emits here; without a listener it would crash the process.
    pool.on("error", () => {});
    // So does a client checked out of the pool (the pool listens only while it is idle) whose connection
    // drops between two statements, in a transaction say: the database restarting, or the network to it
    // cut, ended the process (exit 1). Heard here, the next statement on that client fails instead (its
    // request answers 503, a store is retried) and the pool drops it when it is released.
    pool.on("connect", (client) => client.on("error", () => {}));
    db = new Kysely<Schema>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
    dialect = "postgres";
    location = redactDatabaseUrl(options.databaseUrl);
  } else {
    location = path.resolve(options.dataDir, "tandem.sqlite");
    if (options.create === false && !existsSync(location)) throw new DatabaseNotFoundError(location);
    mkdirSync(options.dataDir, { recursive: true });
    db = new Kysely<Schema>({ dialect: new Sqlite3Dialect({ filename: location }) });
    dialect = "sqlite";
  }
  try {
    if (dialect === "postgres" && options.create === false && !(await hasTandemTables(db))) throw new DatabaseNotFoundError(location);
    await migrateToLatest(db as Kysely<unknown>, dialect);
  } catch (error) {
    await db.destroy().catch(() => {});
    throw error;
  }
  const main = db;
  // Opened on its first read (`SyncReads` opens the file then), so a CLI command never opens it.
  const readsNow =
    dialect === "sqlite" && nodeSqlite() ? new SyncReads({ filename: location, fallback: (query) => main.executeQuery(query) }) : undefined;
  const reads = readsNow ? new Kysely<Schema>({ dialect: new SyncReadsDialect(readsNow) }) : db;
  return {
    db,
    reads,
    readsNow,
    dialect,
    location,
    close: async () => {
      if (reads !== db) await reads.destroy();
      readsNow?.close();
      await db.destroy();
    },
  };
}
