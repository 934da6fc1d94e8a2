import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ALL_SCOPES } from "@tandem/core";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresSchema, POSTGRES_URL } from "../../test/harness";
import { ApiKeyVerifier, createApiKey, revokeApiKey } from "../auth/api-keys";
import { createFolder, ensureGeneralFolder, listFolders } from "../folders/folders-service";
import { ApiError } from "../http/errors";
import { createUser } from "../users/users-service";
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
    expect(Number((applied as { n: number }).n)).toBe(2);
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
    const verifier = new ApiKeyVerifier(database.db);
    const principal = await verifier.verify(key.apiKey);
    expect(principal?.userId).toBe(user.id);
    expect([...(principal?.credential.scopes ?? [])]).toEqual(["os.notes:read"]);

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

  it("creates General exactly once under concurrent initialisation", async () => {
    const user = await createUser(database.db, { username: "racer" });
    const results = await Promise.all(Array.from({ length: 8 }, () => ensureGeneralFolder(database.db, user.id)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await listFolders(database.db, user.id)).map((f) => f.name)).toEqual(["General"]);
  });

  it("creates nested paths, reuses existing folders case-insensitively, and keeps owners apart", async () => {
    const owner = await createUser(database.db, { username: "nester" });
    const other = await createUser(database.db, { username: "stranger" });
    const first = await createFolder(database.db, owner.id, { path: "Projects/2026/Q4" });
    expect(first).toMatchObject({ mode: "created", path: "Projects/2026/Q4", createdSegments: ["Projects", "2026", "Q4"] });
    const again = await createFolder(database.db, owner.id, { path: "projects/2026/q4" });
    expect(again).toMatchObject({ mode: "existing", path: "Projects/2026/Q4", createdSegments: [] });
    expect(again.folder.id).toBe(first.folder.id);

    const under = await createFolder(database.db, owner.id, { name: "Notes", parentId: first.folder.id });
    expect(under.path).toBe("Projects/2026/Q4/Notes");

    expect((await rejection(createFolder(database.db, other.id, { name: "x", parentId: first.folder.id }))).status).toBe(404);
    expect((await rejection(listFolders(database.db, other.id, first.folder.id))).status).toBe(404);
    expect(await listFolders(database.db, other.id)).toEqual([]);
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
