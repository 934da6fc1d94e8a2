import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Generated, Kysely, sql } from "kysely";
import sqlite3 from "sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sqlite3Dialect } from "./index";
import { StatementCache } from "./statement-cache";

interface Tables {
  items: { id: Generated<number>; name: string; flag: number | null; stamp: string | null; big: number | null };
}

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "kysely-sqlite3-"));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function openDatabase(name: string, statementCacheSize?: number): Promise<Kysely<Tables>> {
  const db = new Kysely<Tables>({
    dialect: new Sqlite3Dialect({ filename: path.join(dataDir, `${name}.sqlite`), busyTimeoutMs: 1234, statementCacheSize }),
  });
  await db.schema
    .createTable("items")
    .addColumn("id", "integer", (column) => column.primaryKey().autoIncrement())
    .addColumn("name", "text", (column) => column.notNull().unique())
    .addColumn("flag", "integer")
    .addColumn("stamp", "text")
    .addColumn("big", "integer")
    .execute();
  return db;
}

describe("Sqlite3Dialect", () => {
  let db: Kysely<Tables>;

  beforeAll(async () => {
    db = await openDatabase("dialect");
  });

  afterAll(async () => {
    await db.destroy();
  });

  it("opens the file in WAL mode with full sync, foreign keys and the configured busy timeout", async () => {
    const pragma = async (name: string) => Object.values((await sql.raw(`pragma ${name}`).execute(db)).rows[0] as object)[0];
    expect(await pragma("journal_mode")).toBe("wal");
    expect(await pragma("synchronous")).toBe(2);
    expect(await pragma("foreign_keys")).toBe(1);
    expect(await pragma("busy_timeout")).toBe(1234);
  });

  it("reports the inserted id and affected rows of writes, and answers rows for RETURNING", async () => {
    const inserted = await db.insertInto("items").values({ name: "first" }).executeTakeFirstOrThrow();
    expect(inserted.insertId).toBeTypeOf("bigint");
    const returned = await db.insertInto("items").values({ name: "second" }).returning(["id", "name"]).executeTakeFirstOrThrow();
    expect(returned).toEqual({ id: Number(inserted.insertId) + 1, name: "second" });
    const updated = await db.updateTable("items").set({ flag: 7 }).where("name", "in", ["first", "second"]).executeTakeFirstOrThrow();
    expect(updated.numUpdatedRows).toBe(2n);
    const deleted = await db.deleteFrom("items").where("name", "=", "nobody").executeTakeFirstOrThrow();
    expect(deleted.numDeletedRows).toBe(0n);
  });

  it("binds booleans as 0/1, bigints as numbers and dates as ISO strings", async () => {
    const when = new Date("2026-01-02T03:04:05.000Z");
    await db
      .insertInto("items")
      // Values the driver, not the types, must cope with: what callers hand Kysely at run time.
      .values({ name: "bound", flag: true as unknown as number, big: 42n as unknown as number, stamp: when as unknown as string })
      .execute();
    const row = await db.selectFrom("items").select(["flag", "big", "stamp"]).where("name", "=", "bound").executeTakeFirstOrThrow();
    expect(row).toEqual({ flag: 1, big: 42, stamp: when.toISOString() });
  });

  it("rolls back a failed transaction completely", async () => {
    await db.insertInto("items").values({ name: "taken" }).execute();
    await expect(
      db.transaction().execute(async (tx) => {
        await tx.insertInto("items").values({ name: "ghost" }).execute();
        await tx.insertInto("items").values({ name: "taken" }).execute();
      }),
    ).rejects.toThrow(/UNIQUE/);
    expect(await db.selectFrom("items").select("id").where("name", "=", "ghost").executeTakeFirst()).toBeUndefined();
  });

  it("runs transactions one at a time, so read-then-write never loses an update; row locks compile away", async () => {
    const { id } = await db.insertInto("items").values({ name: "counter", stamp: "" }).returning("id").executeTakeFirstOrThrow();
    const read = (tx: Kysely<Tables>) => tx.selectFrom("items").select("stamp").where("id", "=", id).forUpdate().skipLocked();
    expect(read(db).compile().sql).not.toMatch(/for update|skip locked/i);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        db.transaction().execute(async (tx) => {
          const row = await read(tx).executeTakeFirstOrThrow();
          await tx
            .updateTable("items")
            .set({ stamp: `${row.stamp}${i}` })
            .where("id", "=", id)
            .execute();
        }),
      ),
    );
    const final = await db.selectFrom("items").select("stamp").where("id", "=", id).executeTakeFirstOrThrow();
    expect(final.stamp).toHaveLength(10);
  });

  it("streams a result in chunks", async () => {
    await db
      .insertInto("items")
      .values(Array.from({ length: 5 }, (_, i) => ({ name: `stream-${i}` })))
      .execute();
    const names: string[] = [];
    for await (const row of db.selectFrom("items").select("name").where("name", "like", "stream-%").orderBy("name").stream(2)) {
      names.push(row.name);
    }
    expect(names).toEqual(["stream-0", "stream-1", "stream-2", "stream-3", "stream-4"]);
  });

  it("keeps working past the statement cache's capacity and after a statement that fails to prepare", async () => {
    const small = await openDatabase("small-cache", 2);
    try {
      await expect(sql.raw("select from where").execute(small)).rejects.toThrow(/syntax error/);
      for (let round = 0; round < 2; round++) {
        for (const column of ["id", "name", "flag", "stamp"] as const) {
          await small.selectFrom("items").select(column).execute();
        }
      }
      await small.insertInto("items").values({ name: "after" }).execute();
      expect(await small.selectFrom("items").select("name").execute()).toEqual([{ name: "after" }]);
    } finally {
      await small.destroy();
    }
  });

  it("finishes the query in flight when destroyed", async () => {
    const closing = await openDatabase("closing");
    const inFlight = closing.selectFrom("items").selectAll().execute();
    await closing.destroy();
    await expect(inFlight).resolves.toEqual([]);
  });
});

describe("StatementCache", () => {
  let database: sqlite3.Database;

  beforeAll(async () => {
    database = await new Promise((resolve, reject) => {
      const opened = new sqlite3.Database(":memory:", (error) => (error ? reject(error) : resolve(opened)));
    });
  });

  afterAll(async () => {
    await new Promise<void>((resolve, reject) => database.close((error) => (error ? reject(error) : resolve())));
  });

  it("prepares once for misses that arrive together and evicts the least recently used", async () => {
    const cache = new StatementCache(database, 2);
    const [first, again] = await Promise.all([cache.prepare("select 1"), cache.prepare("select 1")]);
    expect(again).toBe(first);
    await cache.prepare("select 2");
    expect(cache.cached("select 1")).toBe(first); // now the most recently used
    await cache.prepare("select 3");
    expect(cache.cached("select 2")).toBeUndefined();
    expect(cache.cached("select 1")).toBe(first);
    expect(cache.cached("select 3")).toBeDefined();
    await cache.clear();
    expect(cache.cached("select 1")).toBeUndefined();
  });

  it("does not keep a statement that failed to prepare", async () => {
    const cache = new StatementCache(database, 2);
    await expect(cache.prepare("select from where")).rejects.toThrow(/syntax error/);
    expect(cache.cached("select from where")).toBeUndefined();
    await expect(cache.prepare("select from where")).rejects.toThrow(/syntax error/);
  });
});
