import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Sqlite3Dialect } from "@tandem/kysely-sqlite3";
import { CompiledQuery, Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeSqlite, SyncReads } from "./sync-reads";

const run = promisify(execFile);
const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));

/** Another process's commit, as the CLI's `keys revoke` makes one beside a running server. */
async function commitFromAnotherProcess(filename: string, value: string): Promise<void> {
  const script = `const { DatabaseSync } = require("node:sqlite");
    const db = new DatabaseSync(process.argv[1], { timeout: 5000 });
    db.prepare("update items set value = ? where id = 1").run(process.argv[2]);
    db.close();`;
  await run(process.execPath, ["-e", script, filename, value]);
}

describe.skipIf(!nodeSqlite())("the synchronous read connection's remembered answers", () => {
  let dir: string;
  let filename: string;
  let main: Kysely<unknown>;
  let reads: SyncReads;
  const select = CompiledQuery.raw("select value from items where id = ?", [1]);
  const valueNow = () => (reads.rowsNow(select) as { value: string }[] | undefined)?.[0]?.value;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tandem-sync-reads-"));
    filename = path.join(dir, "db.sqlite");
    // The server's writer: the `sqlite3` dialect, which puts the file in WAL mode.
    main = new Kysely<unknown>({ dialect: new Sqlite3Dialect({ filename }) });
    await main.executeQuery(CompiledQuery.raw("create table items (id integer primary key, value text)"));
    await main.executeQuery(CompiledQuery.raw("insert into items values (1, 'first')"));
    reads = new SyncReads({ filename, fallback: (query) => main.executeQuery(query) });
  });

  afterAll(async () => {
    reads.close();
    await main.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers a repeated read from memory until a commit, then reads again", async () => {
    const first = reads.rowsNow(select);
    expect(first).toEqual([{ value: "first" }]);
    await nextTick();
    // Nothing committed: the same (frozen) rows, not read again.
    expect(reads.rowsNow(select)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);

    // A commit by the writer in this process (another SQLite library, on the thread pool).
    await main.executeQuery(CompiledQuery.raw("update items set value = 'second' where id = 1"));
    await nextTick();
    expect(valueNow()).toBe("second");
  });

  it("sees another process's commit on the next read after it", async () => {
    expect(valueNow()).toBe("second");
    for (const value of ["third", "fourth"]) {
      await commitFromAnotherProcess(filename, value);
      await nextTick();
      expect(valueNow()).toBe(value);
    }
  });

  it("answers undefined for what it cannot do (a write, SQLite refuses it; a closed connection), so the caller reads through the main connection", async () => {
    expect(reads.rowsNow(CompiledQuery.raw("update items set value = 'x' where id = 1"))).toBeUndefined();
    expect(valueNow()).toBe("fourth");
    const other = new SyncReads({ filename, fallback: (query) => main.executeQuery(query) });
    expect(other.rowsNow(select)).toEqual([{ value: "fourth" }]);
    other.close();
    expect(other.rowsNow(select)).toBeUndefined();
  });
});
