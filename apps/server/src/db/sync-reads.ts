import { closeSync, openSync, readSync } from "node:fs";
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

/** What the WAL index's header says: changed since the last look, unchanged, or unknown (read it another way). */
type HeaderLook = "changed" | "unchanged" | "unknown";

/** Bytes of one copy of the WAL index header (https://sqlite.org/walformat.html, "The WAL-Index Header"). */
const WAL_INDEX_HEADER_BYTES = 48;
/** Its `isInit` byte: 1 once a connection has built the index. */
const IS_INIT_OFFSET = 12;

/**
 * Whether anything was committed, read from the header of the WAL index, the `-shm` file every
 * connection to a WAL database maps and a commit rewrites (its change counter, the WAL's last
 * frame and salts): one `pread` of 96 bytes, where `pragma data_version` takes and releases a
 * read lock besides (three system calls and a statement; about 9 µs a request under the
 * benchmark's load against 3.5). The header is kept twice; a writer updates the second copy,
 * then the first, and readers (SQLite's own, and this) take it only when both copies agree: two
 * that differ are a commit being written, which the caller then checks through `data_version`.
 * Only in WAL mode (a database leaves it only when no other connection is open, and this one
 * stays open), and only while the file reads as an initialised index.
 */
class WalIndexHeader {
  readonly #read = Buffer.alloc(2 * WAL_INDEX_HEADER_BYTES);
  readonly #last = Buffer.alloc(WAL_INDEX_HEADER_BYTES);

  private constructor(private readonly fd: number) {}

  /** The header of `filename`'s WAL index, or undefined when the database is not in WAL mode or the file cannot be read. */
  static open(database: DatabaseSync, filename: string): WalIndexHeader | undefined {
    try {
      const mode = database.prepare("pragma journal_mode").get()?.journal_mode;
      if (typeof mode !== "string" || mode.toLowerCase() !== "wal") return undefined;
      return new WalIndexHeader(openSync(`${filename}-shm`, "r"));
    } catch {
      return undefined;
    }
  }

  look(): HeaderLook {
    let bytes: number;
    try {
      bytes = readSync(this.fd, this.#read, 0, this.#read.length, 0);
    } catch {
      return "unknown";
    }
    const read = this.#read;
    if (bytes < read.length || read[IS_INIT_OFFSET] !== 1) return "unknown";
    const size = WAL_INDEX_HEADER_BYTES;
    if (read.compare(read, size, 2 * size, 0, size) !== 0) return "unknown";
    if (read.compare(this.#last, 0, size, 0, size) === 0) return "unchanged";
    read.copy(this.#last, 0, 0, size);
    return "changed";
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // Closed already; nothing to release.
    }
  }
}

/**
 * Answers remembered by statement and parameters, all forgotten as soon as anything is committed
 * to the database by any connection of any process: the WAL index's header ({@link WalIndexHeader})
 * and SQLite's `data_version` on this connection change exactly then. So an answer is never older
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
  readonly #walIndex: WalIndexHeader | undefined;
  #version: unknown;
  /** Whether the database was looked at in the current run of microtasks (see {@link #checkVersion}). */
  #checked = false;

  constructor(
    database: DatabaseSync,
    filename: string,
    private readonly capacity: number,
  ) {
    this.#dataVersion = database.prepare("pragma data_version");
    this.#walIndex = WalIndexHeader.open(database, filename);
  }

  /**
   * Forgets every answer if the database changed since the version was last read. It is read once
   * per run of microtasks: a request's reads (its key row, then its listing) run one after another
   * as promise continuations of the one event that started them, and `process.nextTick` fires once
   * they have all run, before the next event (another request's bytes, another query's completion)
   * is handled. Every request those reads serve arrived before that event, so before the version
   * was read: each sees every commit made before it arrived, as a fresh read would. So it is read
   * once per request rather than per read: the WAL index's header, or `data_version` when the
   * header cannot tell. Each is compared with its own last reading, so a commit since either was
   * last read is seen by it, and the answers kept are never older than the last look.
   */
  #checkVersion(): void {
    if (this.#checked) return;
    const look = this.#walIndex?.look() ?? "unknown";
    if (look === "changed") {
      this.#clear();
    } else if (look === "unknown") {
      const version = this.#dataVersion.get()?.data_version;
      if (version !== this.#version) {
        this.#clear();
        this.#version = version;
      }
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

  close(): void {
    this.#walIndex?.close();
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

/**
 * The read-only connection itself, opened on its first read, answering on the calling thread.
 * Kysely reaches it through {@link SyncReadsDialect}; the hottest reads (a credential's row, the
 * folder listing) call {@link rowsNow} directly, which skips Kysely's executor: acquiring and
 * releasing a connection, and the promises between, cost more than the remembered answer.
 */
export class SyncReads {
  readonly #statements = new Map<string, StatementSync>();
  #database: DatabaseSync | undefined;
  #answers: AnswersUntilChange | undefined;
  #closed = false;

  constructor(readonly config: SyncReadsConfig) {}

  #open(): AnswersUntilChange {
    if (this.#closed) throw new Error("the SQLite read connection is closed");
    const sqlite = nodeSqlite();
    if (!sqlite) throw new Error("node:sqlite is not available in this Node");
    // Read-only: nothing written here could bypass the writer's one-transaction-at-a-time queue.
    const database = new sqlite.DatabaseSync(this.config.filename, { readOnly: true, timeout: 0 });
    this.#database = database;
    this.#answers = new AnswersUntilChange(database, this.config.filename, this.config.answerCacheSize ?? 256);
    return this.#answers;
  }

  #statement(database: DatabaseSync, sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement) {
      // Re-insert so the map's iteration order stays least-recently-used first.
      this.#statements.delete(sql);
    } else {
      statement = database.prepare(sql);
      const capacity = this.config.statementCacheSize ?? 64;
      // Statements need no finalising: node:sqlite finalises them when they are collected.
      if (this.#statements.size >= capacity) this.#statements.delete(this.#statements.keys().next().value as string);
    }
    this.#statements.set(sql, statement);
    return statement;
  }

  /**
   * A read's rows, answered here and now; undefined when this connection could not answer it
   * (busy, closed, or any other failure), and the caller reads through the main connection instead
   * (`config.fallback`, or {@link Database.reads}). Writes are refused with an error, before SQLite would.
   */
  rowsNow<R>(compiledQuery: CompiledQuery<R>): readonly R[] | undefined {
    // A read-only connection refuses writes before SQLite does.
    if (WRITE_NODES.has(compiledQuery.query.kind)) throw new Error("the read connection takes no writes; use the main database");
    try {
      const answers = this.#answers ?? this.#open();
      const parameters = bindableParameters(compiledQuery.parameters) as Parameters<StatementSync["all"]>;
      const key = JSON.stringify(parameters);
      let rows = answers.get(compiledQuery.sql, key);
      if (!rows) {
        rows = frozen(this.#statement(this.#database as DatabaseSync, compiledQuery.sql).all(...parameters) as Record<string, unknown>[]);
        answers.set(compiledQuery.sql, key, rows);
      }
      return rows as readonly R[];
    } catch {
      return undefined;
    }
  }

  close(): void {
    this.#closed = true;
    this.#answers?.close();
    this.#answers = undefined;
    this.#database?.close();
    this.#database = undefined;
  }
}

class SyncReadConnection implements DatabaseConnection {
  constructor(private readonly reads: SyncReads) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    let rows: readonly unknown[] | undefined;
    try {
      rows = this.reads.rowsNow(compiledQuery);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!rows) return this.reads.config.fallback(compiledQuery) as Promise<QueryResult<R>>;
    return Promise.resolve({ rows: rows as R[] });
  }

  // biome-ignore lint/correctness/useYield: a read-only connection streams nothing; the interface wants the method.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("the synchronous read connection does not stream; use the main database");
  }
}

class SyncReadsDriver implements Driver {
  readonly #connection: SyncReadConnection;

  constructor(private readonly reads: SyncReads) {
    this.#connection = new SyncReadConnection(reads);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection;
  }

  async beginTransaction(): Promise<void> {
    throw new Error("the synchronous read connection takes no transactions; use the main database");
  }

  async commitTransaction(): Promise<void> {}

  async rollbackTransaction(): Promise<void> {}

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.reads.close();
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
  constructor(private readonly reads: SyncReads) {
    // SQLite's compiler, adapter and introspector, as the main connection's; only the driver differs.
    super({ filename: reads.config.filename });
  }

  override createDriver(): Driver {
    return new SyncReadsDriver(this.reads);
  }
}
