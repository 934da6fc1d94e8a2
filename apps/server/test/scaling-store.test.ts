import { type ChildProcessByStdio, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { jsonToText, readNoteBody, writeNoteBody } from "@tandem/core";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { type Database, openDatabase } from "../src/db/database";
import type { Schema } from "../src/db/schema";
import { DocumentStore } from "../src/sync/document-store";
import {
  CHECKOUT,
  createPostgresSchema,
  POSTGRES_URL,
  type ServerProcess,
  spawnServerProcess,
  startTestServer,
  type TestServer,
  type TestUser,
} from "./harness";
import { openDoc } from "./sync-client";

/**
 * Never lose a write: every store merges with what is stored, whichever process stored it
 * (docs/scaling.md, "Never lose a write"). Several processes on one database: two server
 * processes on PostgreSQL, a server and a second process on SQLite, and many stores at once.
 */

const bodyText = (doc: Y.Doc) => jsonToText(readNoteBody(doc));
const WRITER = fileURLToPath(new URL("./fakes/document-writer.ts", import.meta.url));
const THREE_PARAGRAPHS = "<p>first paragraph</p><p>second paragraph</p><p>third paragraph</p>";

async function storedRow(db: Kysely<Schema>, name: string) {
  const row = await db.selectFrom("documents").select(["version", "views_version"]).where("name", "=", name).executeTakeFirstOrThrow();
  return { version: Number(row.version), viewsVersion: Number(row.views_version) };
}

/** Replaces `from` with `to` in an open note's body, as an editor would. */
function edit(doc: Y.Doc, from: string, to: string): void {
  const body = readNoteBody(doc);
  writeNoteBody(doc, JSON.parse(JSON.stringify(body).replace(from, to)));
}

describe.skipIf(!POSTGRES_URL)("two server processes on one PostgreSQL database", () => {
  let a: TestServer;
  let b: ServerProcess;
  let alice: TestUser;

  beforeAll(async () => {
    // As a deployment of several instances runs: one secret key, one Redis (this file's own prefix).
    const shared = {
      secretKey: `scaling-store-${Math.random().toString(36).slice(2)}`,
      redisUrl: "redis://127.0.0.1:6379",
      redisPrefix: `test-store-${process.pid}-${Date.now()}`,
    };
    a = await startTestServer(shared, "postgres");
    alice = await a.addUser("alice");
    b = await spawnServerProcess(["--database-url", a.databaseUrl as string, "--redis-url", shared.redisUrl], {
      TANDEM_SECRET_KEY: shared.secretKey,
      TANDEM_REDIS_PREFIX: shared.redisPrefix,
    });
  });

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it("keeps a REST edit through one and a sync edit through the other, in storage, views and open editors", async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Shared", content: THREE_PARAGRAPHS } })).result;
    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    const db = a.server.context.db;
    const before = await storedRow(db, full.docName);

    // B loads the note for its editor; then A stores a REST edit B does not hear of (no Redis
    // extension here), and the editor's edit makes B store its copy, which lacks the REST edit.
    const editor = await openDoc(b.syncUrl, alice.apiKey, full.docName);
    try {
      await alice.client.call("updateNote", {
        params: { id: note.id },
        body: {
          title: "Shared, renamed on A",
          content: "<p>first paragraph</p><p>second paragraph</p><p>third paragraph, edited over REST on A</p>",
        },
      });
      edit(editor.doc, "first paragraph", "first paragraph, edited over sync on B");
      // B's store merges what A stored, and its editor receives it.
      await expect.poll(() => bodyText(editor.doc), { timeout: 5000 }).toContain("edited over REST on A");
    } finally {
      editor.close();
    }
    // Once B has stored and unloaded (its shutdown stores whatever it still holds), storage has both.
    expect(await b.stop()).toBe(0);
    const stored = await new DocumentStore(db).loadDoc(full.docName);
    expect(bodyText(stored)).toContain("edited over sync on B");
    expect(bodyText(stored)).toContain("edited over REST on A");
    const after = await storedRow(db, full.docName);
    expect(after.version).toBeGreaterThanOrEqual(before.version + 2);
    expect(after.viewsVersion).toBe(after.version);
    const { note: read } = await alice.client.call("getNote", { params: { id: note.id } });
    expect(read.title).toBe("Shared, renamed on A");
    expect(read.markdown).toContain("edited over sync on B");
    expect(read.markdown).toContain("edited over REST on A");
    for (const pattern of ["edited over sync on B", "edited over REST on A"]) {
      const { results } = await alice.client.call("grepNotes", { body: { pattern } });
      expect(results.map((r) => r.noteId)).toContain(note.id);
    }
  });
});

/** A second process writing through the real DocumentStore, held between loading and storing. */
async function startWriter(storage: string, name: string, from: string, to: string) {
  const child: ChildProcessByStdio<Writable, Readable, null> = spawn(
    process.execPath,
    ["--import", "tsx", WRITER, storage, name, from, to],
    {
      cwd: CHECKOUT,
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  expect((await lines.next()).value).toBe("loaded");
  return {
    /** Stores the edit on the copy loaded at start; answers once it is stored. */
    async store(): Promise<void> {
      child.stdin.end("go\n");
      const stored = (await lines.next()).value as string;
      expect(JSON.parse(stored)).toMatchObject({ bytes: expect.any(Number) });
      if (child.exitCode === null) await once(child, "exit");
      expect(child.exitCode).toBe(0);
    },
  };
}

describe("a server and a second process on one SQLite database", () => {
  let t: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
  });

  afterAll(async () => {
    await t?.stop();
  });

  it("loses neither the server's edits nor the other process's store, and the open editor receives the latter", async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Local", content: THREE_PARAGRAPHS } })).result;
    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    const db = t.server.context.db;
    const editor = await openDoc(t.server.syncUrl, alice.apiKey, full.docName);
    try {
      // The other process loads the note before the server stores an edit, and stores after it.
      const writer = await startWriter(t.dataDir, full.docName, "third paragraph", "third paragraph, stored by the other process");
      const loaded = await storedRow(db, full.docName);
      edit(editor.doc, "first paragraph", "first paragraph, edited over sync");
      await expect.poll(async () => (await storedRow(db, full.docName)).version, { timeout: 5000 }).toBeGreaterThan(loaded.version);
      await writer.store();
      const stored = await new DocumentStore(db).loadDoc(full.docName);
      expect(bodyText(stored)).toContain("edited over sync");
      expect(bodyText(stored)).toContain("stored by the other process");
      // The server's next store merges the other process's store into the live document and its editor.
      edit(editor.doc, "second paragraph", "second paragraph, edited over sync");
      await expect.poll(() => bodyText(editor.doc), { timeout: 5000 }).toContain("stored by the other process");
    } finally {
      editor.close();
    }
    await expect.poll(() => t.server.context.sync.hocuspocus.documents.has(full.docName), { timeout: 5000 }).toBe(false);
    // A views rebuild from the CLI while the server runs shows the same.
    expect((await t.cli(["views", "rebuild"])).code).toBe(0);
    const stored = await new DocumentStore(db).loadDoc(full.docName);
    for (const text of ["first paragraph, edited over sync", "second paragraph, edited over sync", "stored by the other process"]) {
      expect(bodyText(stored)).toContain(text);
      expect((await alice.client.call("getNote", { params: { id: note.id } })).note.markdown).toContain(text);
    }
    const row = await storedRow(db, full.docName);
    expect(row.viewsVersion).toBe(row.version);
  });
});

describe.each(POSTGRES_URL ? ["sqlite", "postgres"] : ["sqlite"])("many stores of diverging copies at once (%s)", (storage) => {
  // Separate connections, as separate processes would have. On SQLite in one process each one
  // waiting for the write lock holds a libuv thread (there are 4), so fewer of them there.
  const STORES = storage === "sqlite" ? 3 : 8;
  const databases: Database[] = [];
  let drop = async () => {};

  beforeAll(async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-store-race-"));
    let databaseUrl: string | undefined;
    if (storage === "postgres") {
      const schema = await createPostgresSchema(POSTGRES_URL as string);
      databaseUrl = schema.url;
      drop = schema.drop;
    }
    for (let i = 0; i < STORES; i++) databases.push(await openDatabase({ dataDir, databaseUrl }));
    const previous = drop;
    drop = async () => {
      await previous();
      await rm(dataDir, { recursive: true, force: true });
    };
  });

  afterAll(async () => {
    for (const database of databases) await database.close();
    await drop();
  });

  it("stores the union, counts every store, and brings each copy what the others stored before it", async () => {
    const name = `workspace:race-${storage}`;
    const seed = new Y.Doc();
    seed.getMap("race").set("seed", true);
    await new DocumentStore(databases[0]?.db as Kysely<Schema>).save(name, seed);
    const stores = databases.map((database) => new DocumentStore(database.db));
    const copies = await Promise.all(stores.map((store) => store.loadDoc(name)));
    copies.forEach((copy, i) => {
      copy.getMap("race").set(`store ${i}`, i);
    });
    const sizes = await Promise.all(copies.map((copy, i) => stores[i]?.save(name, copy)));
    expect(sizes.every((size) => typeof size === "number" && size > 0)).toBe(true);

    const expected = ["seed", ...copies.map((_, i) => `store ${i}`)].sort();
    const stored = await stores[0]?.loadVersioned(name);
    expect([...(stored?.doc.getMap("race").keys() ?? [])].sort()).toEqual(expected);
    expect(stored?.version).toBe(1 + STORES);
    // Whichever stored last merged in all the others: that copy now holds everything.
    expect(copies.some((copy) => copy.getMap("race").size === expected.length)).toBe(true);
    // Storing a copy again that already holds everything changes nothing but the count.
    const complete = copies.findIndex((copy) => copy.getMap("race").size === expected.length);
    await stores[complete]?.save(name, copies[complete] as Y.Doc);
    const again = await stores[0]?.loadVersioned(name);
    expect([...(again?.doc.getMap("race").keys() ?? [])].sort()).toEqual(expected);
    expect(again?.version).toBe(2 + STORES);
  });
});
