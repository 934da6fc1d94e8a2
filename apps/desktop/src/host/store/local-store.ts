import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Sqlite3Dialect } from "@tandem/kysely-sqlite3";
import { Kysely, sql } from "kysely";
import type { LocalStore } from "../host-context";
import type { LocalSchema } from "./local-schema";
import { migrateLocalStore } from "./migrations";

export const LOCAL_DATABASE_FILE = "tandem.sqlite";

/** How long opening waits for another process to let go of the file before saying it is in use. */
const BUSY_TIMEOUT_MS = 1500;

/**
 * Opens (creating if needed) the local SQLite database `<dataDir>/tandem.sqlite`, with the
 * server's own driver (WAL, one writer), and migrates it.
 *
 * The host takes the file for itself (SQLite's exclusive locking mode): two hosts on one data
 * directory would run two sync hubs over the same documents, so the second one is refused with a
 * clear message instead of failing later on a busy write.
 */
export async function openLocalStore(dataDir: string): Promise<LocalStore> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const filename = path.join(dataDir, LOCAL_DATABASE_FILE);
  const db = new Kysely<LocalSchema>({ dialect: new Sqlite3Dialect({ filename, busyTimeoutMs: BUSY_TIMEOUT_MS }) });
  try {
    await sql`pragma locking_mode = exclusive`.execute(db);
    await migrateLocalStore(db as Kysely<unknown>);
    // A write takes the exclusive lock now (migrations may have written nothing), and holds it.
    await db.transaction().execute(async (trx) => {
      await sql`delete from settings where key = ${"store.opened"}`.execute(trx);
    });
  } catch (error) {
    await db.destroy().catch(() => {});
    throw explainOpenError(filename, error);
  }

  return {
    db,
    async getSetting(key) {
      const row = await db.selectFrom("settings").select("value").where("key", "=", key).executeTakeFirst();
      return row?.value ?? null;
    },
    async setSetting(key, value) {
      if (value === null) {
        await db.deleteFrom("settings").where("key", "=", key).execute();
        return;
      }
      await db
        .insertInto("settings")
        .values({ key, value })
        .onConflict((oc) => oc.column("key").doUpdateSet({ value }))
        .execute();
    },
    close: () => db.destroy(),
  };
}

/** SQLite's error codes for the two failures a person can act on, turned into sentences. */
function explainOpenError(filename: string, error: unknown): Error {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new Error(
      `The local database ${filename} is in use by another Tandem (the desktop app or web mode): quit it, or use another data directory`,
      { cause: error },
    );
  }
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
    return new Error(
      `The local database ${filename} is damaged (not a readable SQLite database): move it aside and start again; the documents will be fetched from the server`,
      { cause: error },
    );
  }
  if (code === "SQLITE_CANTOPEN" || code === "SQLITE_READONLY" || code === "SQLITE_PERM") {
    return new Error(`The local database ${filename} cannot be opened for writing (${String(code)})`, { cause: error });
  }
  return new Error(`Opening the local database ${filename} failed: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
