// For dialects built beside this one (e.g. a synchronous read-only connection on the same file): the
// same parameter binding and the same test of what writes.
export { bindableParameters, WRITE_NODES } from "./sqlite3-connection";
export { Sqlite3Dialect, type Sqlite3DialectConfig } from "./sqlite3-dialect";
