import type { CompiledQuery, DatabaseConnection, QueryResult } from "kysely";
import type sqlite3 from "sqlite3";
import type { StatementCache } from "./statement-cache";

type Row = Record<string, unknown>;

export const WRITE_NODES: ReadonlySet<string> = new Set(["InsertQueryNode", "UpdateQueryNode", "DeleteQueryNode", "MergeQueryNode"]);

/**
 * Whether a query answers rows. Writes without RETURNING run with `Statement.run`, which reports
 * the affected row count and the inserted rowid; everything else (selects, RETURNING, raw SQL)
 * runs with `Statement.all`.
 */
function returnsRows(query: CompiledQuery["query"]): boolean {
  if (!WRITE_NODES.has(query.kind)) return true;
  return "returning" in query && query.returning !== undefined;
}

/** sqlite3 binds numbers, strings, buffers and null; Kysely may hand it booleans and bigints. */
function bindable(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Date) return value.toISOString();
  return value;
}

/**
 * The parameters as sqlite3 should bind them. Almost always they are strings and numbers
 * already, and the compiled query's own array is handed over as it is (sqlite3 copies the values
 * before the call returns); only a boolean, bigint or Date costs a converted copy.
 */
export function bindableParameters(parameters: readonly unknown[]): readonly unknown[] {
  for (const value of parameters) {
    if (typeof value === "boolean" || typeof value === "bigint" || value instanceof Date) return parameters.map(bindable);
  }
  return parameters;
}

function all(statement: sqlite3.Statement, parameters: readonly unknown[]): Promise<Row[]> {
  return new Promise<Row[]>((resolve, reject) => {
    statement.all(parameters, (error: Error | null, rows: Row[]) => (error ? reject(error) : resolve(rows)));
  });
}

function run(statement: sqlite3.Statement, parameters: readonly unknown[]): Promise<{ changes: number; lastID: number }> {
  return new Promise((resolve, reject) => {
    statement.run(parameters, function (this: sqlite3.RunResult, error: Error | null) {
      if (error) reject(error);
      else resolve({ changes: this.changes, lastID: this.lastID });
    });
  });
}

export class Sqlite3Connection implements DatabaseConnection {
  constructor(private readonly statements: StatementCache) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.statements.cached(compiledQuery.sql) ?? (await this.statements.prepare(compiledQuery.sql));
    const parameters = bindableParameters(compiledQuery.parameters);
    if (returnsRows(compiledQuery.query)) {
      return { rows: (await all(statement, parameters)) as R[] };
    }
    const outcome = await run(statement, parameters);
    return {
      rows: [],
      numAffectedRows: BigInt(outcome.changes),
      insertId: BigInt(outcome.lastID),
    };
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    // sqlite3's row-by-row API cannot pause between rows, so read the result and hand it out in chunks.
    const { rows } = await this.executeQuery<R>(compiledQuery);
    for (let start = 0; start < rows.length; start += chunkSize) {
      yield { rows: rows.slice(start, start + chunkSize) };
    }
  }
}
