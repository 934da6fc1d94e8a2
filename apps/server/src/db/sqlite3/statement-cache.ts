import type sqlite3 from "sqlite3";

/**
 * Prepared statements by SQL text, least recently used evicted first. Kysely compiles the same
 * query shape to the same SQL, so a hot route prepares its statements once.
 */
export class StatementCache {
  readonly #statements = new Map<string, Promise<sqlite3.Statement>>();

  constructor(
    private readonly database: sqlite3.Database,
    private readonly capacity: number,
  ) {}

  get(sql: string): Promise<sqlite3.Statement> {
    const cached = this.#statements.get(sql);
    if (cached) {
      // Re-insert so the map's iteration order stays least-recently-used first.
      this.#statements.delete(sql);
      this.#statements.set(sql, cached);
      return cached;
    }
    const prepared = new Promise<sqlite3.Statement>((resolve, reject) => {
      const statement = this.database.prepare(sql, (error) => (error ? reject(error) : resolve(statement)));
    });
    // A statement that fails to prepare (a syntax error) is not worth keeping.
    prepared.catch(() => this.#statements.delete(sql));
    this.#statements.set(sql, prepared);
    this.#evict();
    return prepared;
  }

  #evict(): void {
    while (this.#statements.size > this.capacity) {
      const oldest = this.#statements.keys().next().value as string;
      const statement = this.#statements.get(oldest);
      this.#statements.delete(oldest);
      statement?.then((s) => s.finalize()).catch(() => {});
    }
  }

  async clear(): Promise<void> {
    const statements = [...this.#statements.values()];
    this.#statements.clear();
    await Promise.all(
      statements.map((pending) =>
        pending.then((statement) => new Promise<void>((resolve) => statement.finalize(() => resolve()))).catch(() => {}),
      ),
    );
  }
}
