export { Sqlite3Dialect, type Sqlite3DialectConfig } from "./sqlite3-dialect";
