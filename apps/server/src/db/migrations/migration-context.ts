import type { CreateTableBuilder } from "kysely";

export type Dialect = "sqlite" | "postgres";

/** What a migration needs to know about the dialect it runs on; kept to the few real differences. */
export interface MigrationContext {
  readonly dialect: Dialect;
  /** The column type for binary data. */
  readonly binaryType: "blob" | "bytea";
  /** Adds an auto-incrementing integer primary key named `id`. */
  addIdColumn<T extends string>(table: CreateTableBuilder<T, never>): CreateTableBuilder<T, "id">;
}

export function migrationContext(dialect: Dialect): MigrationContext {
  return {
    dialect,
    binaryType: dialect === "sqlite" ? "blob" : "bytea",
    addIdColumn: (table) =>
      dialect === "sqlite"
        ? table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        : table.addColumn("id", "bigint", (c) => c.primaryKey().generatedByDefaultAsIdentity()),
  };
}
