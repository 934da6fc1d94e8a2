import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ALL_SCOPES, putFolder, putNote, removeFolder, removeNote, writeNoteBody } from "@tandem/core";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { createPostgresSchema, POSTGRES_URL } from "../../test/harness";
import { ApiKeyVerifier, createApiKey, revokeApiKey } from "../auth/api-keys";
import { ApiError } from "../http/errors";
import { createUser } from "../people/users/users-service";
import { folderPath, listFolders } from "../workspace/folders/folders-service";
import { searchNotes } from "../workspace/search/search-index";
import { materializeNoteBody } from "../workspace/views/note-view";
import { materializeWorkspace } from "../workspace/views/workspace-view";
import { type Database, openDatabase } from "./database";

interface StorageFixture {
  open(): Promise<Database>;
  cleanup(): Promise<void>;
}

async function sqliteFixture(): Promise<StorageFixture> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-storage-"));
  return { open: () => openDatabase({ dataDir }), cleanup: () => rm(dataDir, { recursive: true, force: true }) };
}

async function postgresFixture(): Promise<StorageFixture> {
  const schema = await createPostgresSchema(POSTGRES_URL as string);
  return { open: () => openDatabase({ dataDir: "unused", databaseUrl: schema.url }), cleanup: schema.drop };
}

const dialects: [string, () => Promise<StorageFixture>][] = [["sqlite", sqliteFixture]];
if (POSTGRES_URL) dialects.push(["postgres", postgresFixture]);
else it.skip("storage suite on PostgreSQL (set TANDEM_TEST_DATABASE_URL to run it)", () => {});

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe.each(dialects)("storage on %s", (dialect, makeFixture) => {
  let fixture: StorageFixture;
  let database: Database;

  beforeAll(async () => {
    fixture = await makeFixture();
    database = await fixture.open();
  });

  afterAll(async () => {
    await database?.close();
    await fixture?.cleanup();
  });

  it("runs on the expected dialect and re-opening migrates nothing twice", async () => {
    expect(database.dialect).toBe(dialect);
    const again = await fixture.open();
    const applied = await again.db
      .selectFrom("schema_migrations" as never)
      .select(sql<number>`count(*)`.as("n"))
      .executeTakeFirstOrThrow();
    // One row per migration file: every migration ran once, none twice.
    const files = readdirSync(new URL("./migrations", import.meta.url)).filter((name) => /^\d{4}-.*\.ts$/.test(name));
    expect(Number((applied as { n: number }).n)).toBe(files.length);
    await again.close();
  });

  it("creates users with unique, normalised usernames", async () => {
    const user = await createUser(database.db, { username: "Alice", name: "Alice A." });
    expect(user).toMatchObject({ username: "alice", name: "Alice A." });
    expect((await rejection(createUser(database.db, { username: "alice" }))).code).toBe("username_taken");
    expect((await rejection(createUser(database.db, { username: "bob_coo" }))).code).toBe("invalid_username");
    expect((await rejection(createUser(database.db, { username: "no spaces" }))).code).toBe("invalid_username");
  });

  it("verifies API keys by hash, rejects tampering, and revokes at once", async () => {
    const user = await createUser(database.db, { username: "keyholder" });
    const key = await createApiKey(database.db, { userId: user.id, scopes: ["os.notes:read"], label: "ro" });
    expect(key.apiKey).toMatch(/^svc_sk_[0-9A-Za-z]{44}$/);
    // As the server reads keys: from `reads` (on SQLite, the synchronous connection that remembers answers).
    const verifier = new ApiKeyVerifier(database.db, database.reads);
    const principal = await verifier.verify(key.apiKey);
    expect(principal?.userId).toBe(user.id);
    expect(principal?.credential.kind === "api_key" && [...principal.credential.scopes]).toEqual(["os.notes:read"]);

    const stored = await database.db.selectFrom("api_keys").selectAll().where("id", "=", key.keyId).executeTakeFirstOrThrow();
    expect(stored.secret_hash).not.toContain(key.apiKey.slice(-32));
    expect(key.apiKey).not.toContain(stored.secret_hash);

    const lastChar = key.apiKey.at(-1) === "a" ? "b" : "a";
    expect(await verifier.verify(key.apiKey.slice(0, -1) + lastChar)).toBeNull();
    expect(await verifier.verify(`${key.apiKey}x`)).toBeNull();
    expect(await verifier.verify("svc_sk_")).toBeNull();

    await revokeApiKey(database.db, key.keyId);
    expect(await verifier.verify(key.apiKey)).toBeNull();
    expect((await rejection(revokeApiKey(database.db, "nosuchkey000"))).status).toBe(404);
  });

  it("answers concurrent key checks correctly, and sees a revocation made while checks are in flight", async () => {
    const user = await createUser(database.db, { username: "concurrent" });
    const keys = await Promise.all(
      Array.from({ length: 6 }, () => createApiKey(database.db, { userId: user.id, scopes: ["os.notes:read"] })),
    );
    const [revokedEarly, revokedLate, ...valid] = keys as [(typeof keys)[0], (typeof keys)[0], ...(typeof keys)[0][]];
    await revokeApiKey(database.db, revokedEarly.keyId);
    const verifier = new ApiKeyVerifier(database.db, database.reads);
    const tampered = (token: string) => `${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`;
    // Many checks at once are batched into shared statements; each must get its own answer.
    const checks = Array.from({ length: 40 }, (_, i) => {
      const key = keys[i % keys.length] as (typeof keys)[0];
      const token = i % 7 === 0 ? tampered(key.apiKey) : key.apiKey;
      return { key, token, result: verifier.verify(token) };
    });
    for (const check of checks) {
      const principal = await check.result;
      const shouldPass = check.token === check.key.apiKey && check.key !== revokedEarly;
      expect(principal !== null, `${check.key.keyId} ${check.token === check.key.apiKey ? "valid" : "tampered"}`).toBe(shouldPass);
    }
    // A revocation through another connection (as the CLI does) holds for every check that starts after it.
    const other = await fixture.open();
    await revokeApiKey(other.db, revokedLate.keyId);
    await other.close();
    const after = await Promise.all([revokedLate, ...valid].map((key) => verifier.verify(key.apiKey)));
    expect(after.map((principal) => principal !== null)).toEqual([false, ...valid.map(() => true)]);
  });

  it("reads what was last committed, by this connection or another process's, however often it was read before", async () => {
    const user = await createUser(database.db, { username: "reread" });
    const nameOf = async () =>
      (await database.reads.selectFrom("users").select("username").where("id", "=", user.id).executeTakeFirstOrThrow()).username;
    expect(await nameOf()).toBe("reread");
    expect(await nameOf()).toBe("reread");
    await database.db.updateTable("users").set({ username: "reread2" }).where("id", "=", user.id).execute();
    expect(await nameOf()).toBe("reread2");
    const other = await fixture.open();
    await other.db.updateTable("users").set({ username: "reread3" }).where("id", "=", user.id).execute();
    await other.close();
    expect(await nameOf()).toBe("reread3");
    if (dialect === "sqlite") {
      // A read-only connection: no write can go past the writer's one-transaction-at-a-time queue.
      expect(database.reads).not.toBe(database.db);
      await expect(database.reads.updateTable("users").set({ username: "nope" }).where("id", "=", user.id).execute()).rejects.toThrow();
      expect(await nameOf()).toBe("reread3");
    }
  });

  it("records when a key was last used", async () => {
    const user = await createUser(database.db, { username: "lastused" });
    const key = await createApiKey(database.db, { userId: user.id, scopes: ALL_SCOPES });
    await new ApiKeyVerifier(database.db).verify(key.apiKey);
    await expect
      .poll(
        async () =>
          (await database.db.selectFrom("api_keys").select("last_used_at").where("id", "=", key.keyId).executeTakeFirst())?.last_used_at,
      )
      .not.toBeNull();
  });

  it("materialises a workspace document into folder and note views with stable ids", async () => {
    const owner = await createUser(database.db, { username: "viewer" });
    const doc = new Y.Doc();
    const [projects, archive, note] = [randomUUID(), randomUUID(), randomUUID()];
    doc.transact(() => {
      putFolder(doc, projects, { name: "Projects", parent: null, createdAt: "2026-01-01T00:00:00.000Z" });
      putFolder(doc, archive, { name: "Archive", parent: projects });
      putNote(doc, note, { title: "Plan", folder: archive, pinned: true, tags: ["a", "b"] });
    });
    await materializeWorkspace(database.db, owner.id, doc);
    const folders = await listFolders(database.db, owner.id);
    const byName = Object.fromEntries(folders.map((f) => [f.name, f]));
    expect(byName.Archive?.parentId).toBe(byName.Projects?.id);
    expect(byName.Archive?.fileCount).toBe(1);
    const noteRow = await database.db.selectFrom("notes").selectAll().where("uuid", "=", note).executeTakeFirstOrThrow();
    expect(noteRow).toMatchObject({ title: "Plan", folder_id: byName.Archive?.id, pinned: 1, tags: '["a","b"]' });

    // Renaming, moving to the root and deleting keep ids and follow the document.
    doc.transact(() => {
      putFolder(doc, archive, { name: "Old stuff", parent: null });
      removeNote(doc, note);
    });
    await materializeWorkspace(database.db, owner.id, doc);
    const after = await listFolders(database.db, owner.id, "root");
    expect(after.map((f) => [f.id, f.name]).sort()).toEqual(
      [
        [byName.Projects?.id, "Projects"],
        [byName.Archive?.id, "Old stuff"],
      ].sort(),
    );
    expect(await database.db.selectFrom("notes").selectAll().where("uuid", "=", note).executeTakeFirst()).toBeUndefined();

    doc.transact(() => removeFolder(doc, projects));
    await materializeWorkspace(database.db, owner.id, doc);
    expect((await listFolders(database.db, owner.id)).map((f) => f.name)).toEqual(["Old stuff"]);
  });

  it("shows orphans at the top level and breaks cycles from concurrent moves", async () => {
    const owner = await createUser(database.db, { username: "cycles" });
    const doc = new Y.Doc();
    const [a, b, orphan] = [randomUUID(), randomUUID(), randomUUID()];
    doc.transact(() => {
      putFolder(doc, a, { name: "A", parent: b });
      putFolder(doc, b, { name: "B", parent: a });
      putFolder(doc, orphan, { name: "Orphan", parent: randomUUID() });
    });
    await materializeWorkspace(database.db, owner.id, doc);
    const folders = await listFolders(database.db, owner.id);
    expect(folders.find((f) => f.name === "Orphan")?.parentId).toBeNull();
    const roots = folders.filter((f) => f.parentId === null).map((f) => f.name);
    expect(roots).toContain(a < b ? "A" : "B");
    expect(await folderPath(database.db, owner.id, folders.find((f) => f.name === (a < b ? "B" : "A"))?.id ?? null)).toHaveLength(2);
  });

  it("keeps owners apart: another owner's folder is 404 and a claimed note uuid is not taken over", async () => {
    const owner = await createUser(database.db, { username: "owner1" });
    const other = await createUser(database.db, { username: "owner2" });
    const folder = randomUUID();
    const note = randomUUID();
    const mine = new Y.Doc();
    mine.transact(() => {
      putFolder(mine, folder, { name: "Mine" });
      putNote(mine, note, { title: "Mine" });
    });
    await materializeWorkspace(database.db, owner.id, mine);
    const theirs = new Y.Doc();
    theirs.transact(() => putNote(theirs, note, { title: "Stolen" }));
    await materializeWorkspace(database.db, other.id, theirs);
    const row = await database.db.selectFrom("notes").selectAll().where("uuid", "=", note).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ owner_id: owner.id, title: "Mine" });
    const folderId = (await listFolders(database.db, owner.id))[0]?.id as number;
    expect((await rejection(listFolders(database.db, other.id, folderId))).status).toBe(404);
    expect(await listFolders(database.db, other.id)).toEqual([]);
  });

  it("searches titles and bodies with ranking, prefixes and snippets, within one owner", async () => {
    const owner = await createUser(database.db, { username: "searcher" });
    const other = await createUser(database.db, { username: "searcher2" });
    const notes = { title: randomUUID(), body: randomUUID(), foreign: randomUUID() };
    const workspace = new Y.Doc();
    workspace.transact(() => {
      putNote(workspace, notes.title, { title: "Gardening calendar" });
      putNote(workspace, notes.body, { title: "Misc" });
    });
    await materializeWorkspace(database.db, owner.id, workspace);
    const foreign = new Y.Doc();
    foreign.transact(() => putNote(foreign, notes.foreign, { title: "Gardening" }));
    await materializeWorkspace(database.db, other.id, foreign);
    for (const [uuid, text] of [
      [notes.title, "tomatoes in spring"],
      [notes.body, "when gardening, water the roses before noon"],
      [notes.foreign, "gardening gardening"],
    ] as const) {
      const doc = new Y.Doc();
      writeNoteBody(doc, { type: "doc", content: [{ type: "paragraph", content: [{ type: "text", text }] }] });
      await materializeNoteBody(database.db, uuid, doc);
    }
    const hits = await searchNotes(database.db, database.dialect, { ownerId: owner.id }, "garden", 10);
    expect(hits.map((h) => h.uuid)).toEqual([notes.title, notes.body]);
    expect(hits[1]?.snippet).toContain("roses");
    expect(await searchNotes(database.db, database.dialect, { ownerId: owner.id }, "\"'*(", 10)).toEqual([]);
  });

  it("rolls back a failed transaction completely", async () => {
    const owner = await createUser(database.db, { username: "rollback" });
    await expect(
      database.db.transaction().execute(async (tx) => {
        await tx.insertInto("users").values({ username: "ghost", name: null, email: null, created_at: new Date().toISOString() }).execute();
        await tx
          .insertInto("users")
          .values({ username: "rollback", name: null, email: null, created_at: new Date().toISOString() })
          .execute();
      }),
    ).rejects.toThrow();
    const ghost = await database.db.selectFrom("users").select("id").where("username", "=", "ghost").executeTakeFirst();
    expect(ghost).toBeUndefined();
    expect(owner.id).toBeGreaterThan(0);
  });

  it("keeps concurrent transactions apart", async () => {
    const owner = await createUser(database.db, { username: "counter" });
    // Each transaction reads then writes; interleaving would lose updates.
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        database.db.transaction().execute(async (tx) => {
          const row = await tx
            .selectFrom("users")
            .select("name")
            .where("id", "=", owner.id)
            // SQLite serialises whole transactions; PostgreSQL needs the row lock.
            .$if(dialect === "postgres", (q) => q.forUpdate())
            .executeTakeFirstOrThrow();
          await tx
            .updateTable("users")
            .set({ name: `${row.name ?? ""}${i % 10}` })
            .where("id", "=", owner.id)
            .execute();
        }),
      ),
    );
    const final = await database.db.selectFrom("users").select("name").where("id", "=", owner.id).executeTakeFirstOrThrow();
    expect(final.name).toHaveLength(10);
  });
});
