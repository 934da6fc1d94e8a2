import { type ColumnMetadata, type Kysely, PostgresDialect, PostgresIntrospector, sql, type TableMetadata } from "kysely";

interface ColumnRow {
  table: string;
  schema: string;
  is_view: boolean;
  column: string | null;
  data_type: string | null;
  not_null: boolean | null;
  has_default: boolean | null;
}

/**
 * Kysely's PostgreSQL introspector, reading the current schema only. Kysely's own lists every
 * schema's columns and asks `pg_get_serial_sequence` about each by name: while another schema of the
 * same database is being migrated (tests in parallel; installs sharing a cluster) a column it saw can
 * be gone when it asks, and the listing fails ("column … does not exist"). The migrator, its one user
 * here, only needs this schema's tables.
 */
export class CurrentSchemaIntrospector extends PostgresIntrospector {
  readonly #db: Kysely<unknown>;

  constructor(db: Kysely<unknown>) {
    super(db);
    this.#db = db;
  }

  override async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as "table", n.nspname as "schema", c.relkind = 'v' as is_view,
             a.attname as "column", format_type(a.atttypid, a.atttypmod) as data_type,
             a.attnotnull as not_null, a.atthasdef as has_default
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      left join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, { name: string; schema: string; isView: boolean; columns: ColumnMetadata[] }>();
    for (const row of rows) {
      let table = tables.get(row.table);
      if (!table) {
        table = { name: row.table, schema: row.schema, isView: row.is_view, columns: [] };
        tables.set(row.table, table);
      }
      if (row.column === null) continue;
      table.columns.push({
        name: row.column,
        dataType: row.data_type ?? "",
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default === true,
        // Not asked of the database (that lookup is the one that races): serial columns have a default.
        isAutoIncrementing: false,
      });
    }
    return [...tables.values()];
  }
}

/** PostgreSQL as Kysely speaks it, with {@link CurrentSchemaIntrospector}. */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): CurrentSchemaIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
