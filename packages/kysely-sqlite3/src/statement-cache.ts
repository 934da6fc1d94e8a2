import type sqlite3 from "sqlite3";

/**
 * Prepared statements by SQL text, least recently used evicted first. Kysely compiles the same
 * query shape to the same SQL, so a hot route prepares its statements once.
 *
 * A hit answers the statement itself, not a promise of it: awaiting an already settled promise
 * still costs a trip through the microtask queue on every query, and hits are nearly all of them.
 */
export class StatementCache {
  readonly #statements = new Map<string, sqlite3.Statement>();
  /** Statements being prepared, so queries that miss together prepare once. */
  readonly #preparing = new Map<string, Promise<sqlite3.Statement>>();

  constructor(
    private readonly database: sqlite3.Database,
    private readonly capacity: number,
  ) {}

  /** The prepared statement for `sql`, if it is cached; marks it most recently used. */
  cached(sql: string): sqlite3.Statement | undefined {
    const statement = this.#statements.get(sql);
    if (statement) {
      // Re-insert so the map's iteration order stays least-recently-used first.
      this.#statements.delete(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Prepares `sql` and caches the statement once it prepared without error (a statement that
   * fails to prepare, a syntax error say, is not worth keeping).
   */
  prepare(sql: string): Promise<sqlite3.Statement> {
    const pending = this.#preparing.get(sql);
    if (pending) return pending;
    const prepared = new Promise<sqlite3.Statement>((resolve, reject) => {
      const statement = this.database.prepare(sql, (error) => (error ? reject(error) : resolve(statement)));
    }).then(
      (statement) => {
        this.#preparing.delete(sql);
        this.#statements.set(sql, statement);
        this.#evict();
        return statement;
      },
      (error: unknown) => {
        this.#preparing.delete(sql);
        throw error;
      },
    );
    this.#preparing.set(sql, prepared);
    return prepared;
  }

  #evict(): void {
    while (this.#statements.size > this.capacity) {
      const [oldest, statement] = this.#statements.entries().next().value as [string, sqlite3.Statement];
      this.#statements.delete(oldest);
      statement.finalize();
    }
  }

  async clear(): Promise<void> {
    const statements = [...this.#statements.values()];
    this.#statements.clear();
    await Promise.all(statements.map((statement) => new Promise<void>((resolve) => statement.finalize(() => resolve()))));
  }
}
