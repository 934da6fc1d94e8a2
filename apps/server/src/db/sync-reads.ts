import type { DatabaseSync, StatementSync } from "node:sqlite";
import { bindableParameters, Sqlite3Dialect, WRITE_NODES } from "@tandem/kysely-sqlite3";
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from "kysely";

/** Runs a query on the asynchronous connection instead; see {@link SyncReadsConfig.fallback}. */
export type FallbackQuery = (query: CompiledQuery) => Promise<QueryResult<unknown>>;

export interface SyncReadsConfig {
  /** The database file, written by another connection (the `sqlite3` dialect's) in WAL mode. */
  readonly filename: string;
  /**
   * Where a read goes when it fails here: the asynchronous connection, which answers or fails as
   * it always did (its errors are the ones `storage-failure.ts` knows). The usual cause is BUSY,
   * rare in WAL mode (a reader waits only while the WAL index is rebuilt); the main connection may
   * wait for it without blocking the event loop, while this one never waits (busy timeout zero).
   */
  readonly fallback: FallbackQuery;
  /** How many prepared statements to keep. */
  readonly statementCacheSize?: number;
  /** How many answers to remember between two commits. */
  readonly answerCacheSize?: number;
}

/** `node:sqlite`, where this Node has it without a flag (22.13 and later); undefined elsewhere. */
export function nodeSqlite(): typeof import("node:sqlite") | undefined {
  return process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite") | undefined;
}

/** A statement's rows, shared by every caller that asks again before the database changes. */
type Rows = readonly Readonly<Record<string, unknown>>[];

/**
 * Answers remembered by statement and parameters, all forgotten as soon as anything is committed
 * to the database by any connection of any process: SQLite's `data_version` on this connection
 * changes exactly then, and reading it costs a microsecond or two. So an answer is never older
 * than the last commit, which is what a fresh read gives (a key revoked by the CLI, another
 * process, is refused on the very next request); between commits the same read is not run again.
 */
class AnswersUntilChange {
  /**
   * By SQL text, then by parameters: a compiled statement's SQL is the same string object every
   * time, whose hash V8 keeps, while a key joining it to the parameters would be a new string of a
   * few kilobytes to hash on every read.
   */
  readonly #answers = new Map<string, Map<string, Rows>>();
  #count = 0;
  readonly #dataVersion: StatementSync;
  #version: unknown;
  /** Whether `data_version` was read in the current run of microtasks (see {@link #checkVersion}). */
  #checked = false;

  constructor(
    database: DatabaseSync,
    private readonly capacity: number,
  ) {
    this.#dataVersion = database.prepare("pragma data_version");
  }

  /**
   * Forgets every answer if the database changed since the version was last read. It is read once
   * per run of microtasks: a request's reads (its key row, then its listing) run one after another
   * as promise continuations of the one event that started them, and `process.nextTick` fires once
   * they have all run, before the next event (another request's bytes, another query's completion)
   * is handled. Every request those reads serve arrived before that event, so before the version
   * was read: each sees every commit made before it arrived, as a fresh read would. Reading it
   * takes a read lock and releases it (two system calls), once per request rather than per read.
   */
  #checkVersion(): void {
    if (this.#checked) return;
    const version = this.#dataVersion.get()?.data_version;
    if (version !== this.#version) {
      this.#clear();
      this.#version = version;
    }
    this.#checked = true;
    process.nextTick(() => {
      this.#checked = false;
    });
  }

  #clear(): void {
    this.#answers.clear();
    this.#count = 0;
  }

  get(sql: string, parameters: string): Rows | undefined {
    this.#checkVersion();
    return this.#answers.get(sql)?.get(parameters);
  }

  set(sql: string, parameters: string, rows: Rows): void {
    // A bound rather than an eviction order: between two commits a few statements repeat.
    if (this.#count >= this.capacity) this.#clear();
    const bySql = this.#answers.get(sql) ?? new Map<string, Rows>();
    this.#answers.set(sql, bySql.set(parameters, rows));
    this.#count++;
  }
}

/** Rows frozen, since every later caller of the same read gets the same objects. */
function frozen(rows: Record<string, unknown>[]): Rows {
  for (const row of rows) Object.freeze(row);
  return Object.freeze(rows);
}

class SyncReadConnection implements DatabaseConnection {
  readonly #statements = new Map<string, StatementSync>();
  readonly #answers: AnswersUntilChange;

  constructor(
    private readonly database: DatabaseSync,
    private readonly config: SyncReadsConfig,
  ) {
    this.#answers = new AnswersUntilChange(database, config.answerCacheSize ?? 256);
  }

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement) {
      // Re-insert so the map's iteration order stays least-recently-used first.
      this.#statements.delete(sql);
    } else {
      statement = this.database.prepare(sql);
      const capacity = this.config.statementCacheSize ?? 64;
      // Statements need no finalising: node:sqlite finalises them when they are collected.
      if (this.#statements.size >= capacity) this.#statements.delete(this.#statements.keys().next().value as string);
    }
    this.#statements.set(sql, statement);
    return statement;
  }

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    // A read-only connection refuses writes before SQLite does.
    if (WRITE_NODES.has(compiledQuery.query.kind)) {
      return Promise.reject(new Error("the read connection takes no writes; use the main database"));
    }
    let rows: Rows | undefined;
    try {
      const parameters = bindableParameters(compiledQuery.parameters) as Parameters<StatementSync["all"]>;
      const key = JSON.stringify(parameters);
      rows = this.#answers.get(compiledQuery.sql, key);
      if (!rows) {
        rows = frozen(this.#statement(compiledQuery.sql).all(...parameters) as Record<string, unknown>[]);
        this.#answers.set(compiledQuery.sql, key, rows);
      }
    } catch {
      return this.config.fallback(compiledQuery) as Promise<QueryResult<R>>;
    }
    return Promise.resolve({ rows: rows as R[] });
  }

  // biome-ignore lint/correctness/useYield: a read-only connection streams nothing; the interface wants the method.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the synchronous read connection does not stream; use the main database");
  }
}

class SyncReadsDriver implements Driver {
  #database: DatabaseSync | undefined;
  #connection: SyncReadConnection | undefined;

  constructor(private readonly config: SyncReadsConfig) {}

  async init(): Promise<void> {
    const sqlite = nodeSqlite();
    if (!sqlite) throw new Error("node:sqlite is not available in this Node");
    // Read-only: nothing written here could bypass the writer's one-transaction-at-a-time queue.
    const database = new sqlite.DatabaseSync(this.config.filename, { readOnly: true, timeout: 0 });
    this.#database = database;
    this.#connection = new SyncReadConnection(database, this.config);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.#connection) throw new Error("the SQLite read connection is closed");
    return this.#connection;
  }

  async beginTransaction(): Promise<void> {
    throw new Error("the synchronous read connection takes no transactions; use the main database");
  }

  async commitTransaction(): Promise<void> {}

  async rollbackTransaction(): Promise<void> {}

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.#connection = undefined;
    this.#database?.close();
    this.#database = undefined;
  }
}

/**
 * A second, read-only connection to the SQLite file that answers on the calling thread
 * (`node:sqlite`), for short indexed reads outside any transaction on the hot request path (the
 * API key lookup, the folder listing). The `sqlite3` connection sends every statement through
 * libuv's thread pool and back: on a busy two-core machine that hop (queueing the work, waking a
 * pool thread, waking the event loop again) costs more than the statement itself, which runs in
 * a few microseconds here.
 *
 * It reads what is committed, as the main connection does outside a transaction: a write this
 * process committed is visible to the next read here (WAL), and so is every other process's.
 * A read repeated before anything is committed anywhere answers the rows it answered last time
 * ({@link AnswersUntilChange}): the answers are frozen, and only for reads whose rows depend on
 * the database alone (no `now`, no `random()`). It never blocks the event loop waiting for a
 * lock (busy timeout zero): a read that fails here, busy or otherwise, goes to the main
 * connection, which answers or fails as it always did. Not for long scans: those would hold the event loop, and belong on the main
 * connection, whose work runs off the main thread.
 */
export class SyncReadsDialect extends Sqlite3Dialect {
  constructor(private readonly reads: SyncReadsConfig) {
    // SQLite's compiler, adapter and introspector, as the main connection's; only the driver differs.
    super({ filename: reads.filename });
  }

  override createDriver(): Driver {
    return new SyncReadsDriver(this.reads);
  }
}
