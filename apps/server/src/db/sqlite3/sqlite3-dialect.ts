import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type SelectModifierNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import sqlite3 from "sqlite3";
import { Sqlite3Connection } from "./sqlite3-connection";
import { StatementCache } from "./statement-cache";

export interface Sqlite3DialectConfig {
  /** Path of the database file, or `:memory:`. */
  readonly filename: string;
  /** How many prepared statements to keep. */
  readonly statementCacheSize?: number;
  /** How long to wait for another process's write lock before failing, in ms. */
  readonly busyTimeoutMs?: number;
}

/**
 * One connection, one writer: every query and transaction takes the connection in turn. SQLite
 * allows one writer at a time anyway, and queueing here (instead of inside SQLite) means a
 * transaction is never interleaved with another request's statements.
 *
 * Waiters queue first come, first served, and `unlock` hands the connection straight to the next
 * one: it never becomes free in between, so no one can jump the queue, and only the waiter whose
 * turn it is wakes up (waking every waiter to race for the lock costs a microtask each, per query).
 */
class ConnectionMutex {
  #locked = false;
  readonly #waiters: (() => void)[] = [];

  lock(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  unlock(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#locked = false;
  }
}

class Sqlite3Driver implements Driver {
  readonly #config: Sqlite3DialectConfig;
  readonly #mutex = new ConnectionMutex();
  #database: sqlite3.Database | undefined;
  #statements: StatementCache | undefined;
  #connection: Sqlite3Connection | undefined;

  constructor(config: Sqlite3DialectConfig) {
    this.#config = Object.freeze({ ...config });
  }

  async init(): Promise<void> {
    const database = await new Promise<sqlite3.Database>((resolve, reject) => {
      const opened = new sqlite3.Database(this.#config.filename, (error) => (error ? reject(error) : resolve(opened)));
    });
    this.#database = database;
    this.#statements = new StatementCache(database, this.#config.statementCacheSize ?? 256);
    this.#connection = new Sqlite3Connection(this.#statements);
    // WAL lets readers in other processes (the CLI) work while the server writes. FULL makes a
    // committed transaction survive power loss, not only a crash: notes are worth an fsync.
    for (const pragma of [
      `busy_timeout = ${this.#config.busyTimeoutMs ?? 5000}`,
      "journal_mode = WAL",
      "synchronous = FULL",
      "foreign_keys = ON",
    ]) {
      await new Promise<void>((resolve, reject) => database.exec(`PRAGMA ${pragma}`, (error) => (error ? reject(error) : resolve())));
    }
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    if (!this.#connection) {
      this.#mutex.unlock();
      throw new Error("the SQLite database is closed");
    }
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    // IMMEDIATE takes the write lock up front, so two processes never deadlock upgrading a read.
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  async releaseConnection(): Promise<void> {
    this.#mutex.unlock();
  }

  async destroy(): Promise<void> {
    const database = this.#database;
    if (!database) return;
    // Wait for the query in flight, then refuse new ones.
    await this.#mutex.lock();
    this.#connection = undefined;
    this.#database = undefined;
    await this.#statements?.clear();
    await new Promise<void>((resolve, reject) => database.close((error) => (error ? reject(error) : resolve())));
    this.#mutex.unlock();
  }
}

/** Row-lock clauses of PostgreSQL (`for update`, `for share`, …), which SQLite has no syntax for. */
const ROW_LOCK_MODIFIERS: ReadonlySet<string> = new Set(["ForUpdate", "ForNoKeyUpdate", "ForShare", "ForKeyShare", "NoWait", "SkipLocked"]);

/**
 * SQLite's compiler, minus row locks: this dialect runs one write transaction at a time
 * (`BEGIN IMMEDIATE`), so whatever a transaction reads stays as read until it commits, and a
 * `select … for update` written once for both dialects means exactly that here without the clause.
 */
class Sqlite3QueryCompiler extends SqliteQueryCompiler {
  protected override visitSelectModifier(node: SelectModifierNode): void {
    if (node.modifier !== undefined && ROW_LOCK_MODIFIERS.has(node.modifier)) return;
    super.visitSelectModifier(node);
  }
}

/** A Kysely dialect for the `sqlite3` package (N-API, so it loads in Node and Electron alike). */
export class Sqlite3Dialect implements Dialect {
  readonly #config: Sqlite3DialectConfig;

  constructor(config: Sqlite3DialectConfig) {
    this.#config = Object.freeze({ ...config });
  }

  createDriver(): Driver {
    return new Sqlite3Driver(this.#config);
  }

  createQueryCompiler(): QueryCompiler {
    return new Sqlite3QueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's introspector is schema-agnostic.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
