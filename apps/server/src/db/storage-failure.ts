/** SQLite result codes that mean the storage, not the statement, failed (extended codes share the prefix). */
const SQLITE_STORAGE_CODES = ["SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_BUSY", "SQLITE_LOCKED"];

/**
 * PostgreSQL SQLSTATE classes meaning the same: 08 connection exception, 53 insufficient resources
 * (disk full, out of memory), 57 operator intervention (shutdown), 58 system error (I/O); and
 * 25006, a read-only transaction (a standby or `default_transaction_read_only`).
 */
const POSTGRES_STORAGE_CLASSES = ["08", "53", "57", "58"];

/** Node's errors for a database server that cannot be reached. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND"]);

/**
 * Whether an error means the database could not store or read at all (full, read-only, gone),
 * rather than a bug or a refused statement: such a request is answered 503, and can be retried.
 */
export function isStorageFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return error.message.includes("Connection terminated");
  if (SQLITE_STORAGE_CODES.some((prefix) => code.startsWith(prefix))) return true;
  if (NETWORK_CODES.has(code)) return true;
  return /^[0-9A-Z]{5}$/.test(code) && (POSTGRES_STORAGE_CLASSES.includes(code.slice(0, 2)) || code === "25006");
}
