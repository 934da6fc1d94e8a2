import { jsonToText, MAX_TYPE_DEPTH, NOTE_FRAGMENT, noteDocName, readNoteBody } from "@tandem/core";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { storages } from "./delegation-fixture";
import { type StorageKind, startTestServer, type TestServer, type TestUser } from "./harness";
import { appendParagraph, openDoc, type SyncedDoc } from "./sync-client";

/** The text of a note's document as it is stored, read straight from the documents table. */
async function storedText(t: TestServer, uuid: string): Promise<string> {
  return jsonToText(readNoteBody(await t.server.context.sync.store.loadDoc(noteDocName(uuid))));
}

/** Makes every write to the documents table fail inside the database, as a full disk would. */
async function breakDocumentStorage(t: TestServer, storage: StorageKind): Promise<{ repair(): Promise<void> }> {
  const { db } = t.server.context;
  if (storage === "postgres") {
    await sql`create function fail_store() returns trigger language plpgsql as $$ begin raise exception 'could not extend file: No space left on device'; end $$`.execute(
      db,
    );
    await sql`create trigger fail_store before insert or update on documents for each row execute function fail_store()`.execute(db);
    return {
      async repair() {
        await sql`drop trigger fail_store on documents`.execute(db);
        await sql`drop function fail_store()`.execute(db);
      },
    };
  }
  await sql`create trigger fail_insert before insert on documents begin select raise(abort, 'database or disk is full'); end`.execute(db);
  await sql`create trigger fail_update before update on documents begin select raise(abort, 'database or disk is full'); end`.execute(db);
  return {
    async repair() {
      await sql`drop trigger fail_insert`.execute(db);
      await sql`drop trigger fail_update`.execute(db);
    },
  };
}

describe.each(storages("store-integrity"))("document storage failures (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("answers a REST write 503 while storage fails, keeps the change in memory and stores it once storage recovers", {
    timeout: 60_000,
  }, async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Durable", content: "before" } })).result;
    const broken = await breakDocumentStorage(t, storage);
    let repaired = false;
    try {
      const patched = await alice.client.raw("updateNote", { params: { id: note.id }, body: { content: "<p>after</p>" } });
      expect(patched.status).toBe(503);
      expect(patched.body).toMatchObject({ success: false, error: "storage_unavailable" });
      expect(await storedText(t, note.uuid)).toBe("before");

      // A sync client coming and going would let Hocuspocus unload the document: it stays.
      const visitor = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(note.uuid));
      expect(jsonToText(readNoteBody(visitor.doc))).toBe("after");
      visitor.close();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(t.server.context.sync.hocuspocus.documents.has(noteDocName(note.uuid))).toBe(true);

      await broken.repair();
      repaired = true;
      await expect.poll(() => storedText(t, note.uuid), { timeout: 30_000, interval: 200 }).toBe("after");
    } finally {
      if (!repaired) await broken.repair();
    }
    const read = await alice.client.call("getNote", { params: { id: note.id } });
    expect(read.note.markdown.trim()).toBe("after");
  });
});

describe("a read-only database", () => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("answers 503 when neither views nor documents can be written, and catches up once the database is writable", {
    timeout: 60_000,
  }, async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Before", content: "body" } })).result;
    // The server writes through one SQLite connection: this makes every write on it fail.
    const { db } = t.server.context;
    await sql`pragma query_only = 1`.execute(db);
    try {
      const renamed = await alice.client.raw("updateNote", { params: { id: note.id }, body: { title: "After" } });
      expect(renamed.status).toBe(503);
      expect(renamed.body).toMatchObject({ success: false, error: "storage_unavailable" });
      const edited = await alice.client.raw("updateNote", { params: { id: note.id }, body: { content: "<p>new body</p>" } });
      expect(edited.status).toBe(503);
    } finally {
      await sql`pragma query_only = 0`.execute(db);
    }
    // The rename was kept in memory: it reaches the documents and the views on a retry.
    await expect
      .poll(async () => (await alice.client.call("getNote", { params: { id: note.id } })).note.title, { timeout: 30_000, interval: 200 })
      .toBe("After");
    await t.restart();
    const read = await alice.client.call("getNote", { params: { id: note.id } });
    expect(read.note.title).toBe("After");
  });
});

describe("fuzzing sync updates against the limits", () => {
  const KiB = 1024;
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer({ maxDocumentBytes: 96 * KiB });
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  /** A small seeded generator (mulberry32), so a failing run can be replayed. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let x = Math.imul(state ^ (state >>> 15), 1 | state);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
  }

  /** The deepest element nesting of a stored body, walked with an explicit stack. */
  function depthOf(doc: Y.Doc): number {
    let deepest = 0;
    const stack: [Y.XmlFragment, number][] = [[doc.getXmlFragment(NOTE_FRAGMENT), 0]];
    for (let entry = stack.pop(); entry; entry = stack.pop()) {
      const [node, depth] = entry;
      deepest = Math.max(deepest, depth);
      for (const child of node.toArray()) if (child instanceof Y.XmlElement) stack.push([child, depth + 1]);
    }
    return deepest;
  }

  it("never stores an update past the limits, never loses an accepted one, and keeps the note usable", { timeout: 300_000 }, async () => {
    const seed = Date.now() % 100_000;
    const next = random(seed);
    const { note } = (await alice.client.call("createNote", { body: { title: "Fuzzed", content: "seed" } })).result;
    const name = noteDocName(note.uuid);
    const refusals = new Set<string>();
    for (let round = 0; round < 24; round++) {
      const synced = await openDoc(t.server.syncUrl, alice.apiKey, name);
      let reason: string | undefined;
      void closeReason(synced).then((r) => {
        reason = r;
      });
      const fragment = synced.doc.getXmlFragment(NOTE_FRAGMENT);
      const roll = next();
      synced.doc.transact(() => {
        if (roll < 0.35) {
          // Nesting from a few levels to far past the limit, under an existing block or at the top.
          let parent: Y.XmlFragment | Y.XmlElement = fragment;
          for (let i = Math.floor(next() * 1500); i > 0; i--) {
            const quote = new Y.XmlElement("blockquote");
            parent.insert(0, [quote]);
            parent = quote;
          }
          parent.insert(0, [new Y.XmlText(`round ${round}`)]);
        } else if (roll < 0.8) {
          // Text from nothing to past the document limit.
          const paragraph = new Y.XmlElement("paragraph");
          paragraph.insert(0, [new Y.XmlText(randomText(Math.floor(next() * 120 * KiB) + 1))]);
          fragment.push([paragraph]);
        } else if (fragment.length > 1) {
          fragment.delete(Math.floor(next() * fragment.length), 1);
        }
      });
      await expect.poll(() => reason !== undefined || !synced.provider.hasUnsyncedChanges, { timeout: 30_000, interval: 50 }).toBe(true);
      synced.close();
      if (reason) {
        refusals.add(reason);
      } else {
        // Accepted: on disk within the store debounce, and exactly as the client has it.
        const expected = jsonToText(readNoteBody(synced.doc));
        await expect.poll(() => storedText(t, note.uuid), { timeout: 30_000, interval: 100 }).toBe(expected);
      }
      const stored = await t.server.context.sync.store.load(name);
      expect(stored?.length ?? 0, `seed ${seed}, round ${round}`).toBeLessThanOrEqual(96 * KiB);
      expect(depthOf(await t.server.context.sync.store.loadDoc(name)), `seed ${seed}, round ${round}`).toBeLessThanOrEqual(MAX_TYPE_DEPTH);
      expect((await alice.client.raw("getNote", { params: { id: note.id } })).status).toBe(200);
    }
    expect(
      [...refusals].every((r) => ["too_deeply_nested", "document_too_large"].includes(r)),
      [...refusals].join(),
    ).toBe(true);
    const patched = await alice.client.raw("updateNote", { params: { id: note.id }, body: { content: "<p>after the fuzz</p>" } });
    expect(patched.status).toBe(200);
  });
});

/** The reason the server gives when it closes a synced document's connection. */
function closeReason(synced: SyncedDoc): Promise<string> {
  return new Promise((resolve) => synced.provider.on("close", ({ event }: { event: CloseEvent }) => resolve(event.reason)));
}

/** Nests `levels` blockquotes at the top of the note body, in one transaction (one update). */
function nestDeep(doc: Y.Doc, levels: number): Y.XmlElement[] {
  const quotes: Y.XmlElement[] = [];
  doc.transact(() => {
    let parent: Y.XmlFragment = doc.getXmlFragment(NOTE_FRAGMENT);
    for (let i = 0; i < levels; i++) {
      const quote = new Y.XmlElement("blockquote");
      parent.insert(0, [quote]);
      quotes.push(quote);
      parent = quote;
    }
    const bottom = new Y.XmlElement("paragraph");
    bottom.insert(0, [new Y.XmlText("at the bottom")]);
    parent.insert(0, [bottom]);
  });
  return quotes;
}

describe("deeply nested documents", () => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  async function expectUsable(noteId: number, uuid: string) {
    const read = await alice.client.raw("getNote", { params: { id: noteId } });
    expect(read.status).toBe(200);
    const patched = await alice.client.raw("updateNote", { params: { id: noteId }, body: { content: "<p>rewritten</p>" } });
    expect(patched.status).toBe(200);
    expect(await storedText(t, uuid)).toBe("rewritten");
    const { snapshots } = await alice.client.call("listSnapshots", { params: { noteId }, query: {} });
    const first = snapshots.at(-1) as { seq: number };
    const restored = await alice.client.raw("restoreSnapshot", { params: { noteId }, body: { seq: first.seq } });
    expect(restored.status).toBe(200);
  }

  it("refuses a sync update nesting 20,000 levels, closing that connection; the note stays usable", { timeout: 120_000 }, async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Deep", content: "hello" } })).result;
    const synced = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(note.uuid));
    nestDeep(synced.doc, 20_000);
    expect(await closeReason(synced)).toBe("too_deeply_nested");
    synced.close();
    expect(await storedText(t, note.uuid)).toBe("hello");
    const live = await t.server.context.sync.getDoc(noteDocName(note.uuid));
    expect(jsonToText(readNoteBody(live))).toBe("hello");
    await expectUsable(note.id, note.uuid);
  });

  // What an older server stored when a client sent the tree ("live"), and after a PATCH then failed
  // halfway through deleting it ("deleted": removed, never garbage-collected; Yjs's load recursed on it).
  it.each(["live", "deleted"])(
    "keeps a note whose stored state nests 20,000 levels (%s) readable, writable and restorable, also after a restart",
    { timeout: 120_000 },
    async (state) => {
      const { note } = (await alice.client.call("createNote", { body: { title: "Poisoned", content: "hello" } })).result;
      await alice.client.call("createSnapshot", { params: { noteId: note.id }, body: { label: "good" } });
      const { store } = t.server.context.sync;
      const poisoned = await store.loadDoc(noteDocName(note.uuid));
      poisoned.gc = false;
      const quotes = nestDeep(poisoned, 20_000);
      if (state === "deleted") {
        // Bottom-up, so that deleting does not recurse here in the test either.
        poisoned.transact(() => {
          for (const quote of quotes.reverse()) quote.delete(0, quote.length);
          poisoned.getXmlFragment(NOTE_FRAGMENT).delete(0, 1);
        });
      }
      await store.save(noteDocName(note.uuid), poisoned);
      await t.restart();
      await expectUsable(note.id, note.uuid);
      await t.restart();
      const read = await alice.client.call("getNote", { params: { id: note.id } });
      expect(read.note.markdown.trim()).toBe("hello");
    },
  );
});

describe("storage limits", () => {
  const KiB = 1024;
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer({ maxDocumentBytes: 64 * KiB, userQuotaBytes: 192 * KiB });
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  /** Appends `bytes` of incompressible text to a note over sync and says how the server answered. */
  async function appendOverSync(uuid: string, bytes: number): Promise<"stored" | string> {
    const before = (await storedText(t, uuid)).length;
    const synced = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(uuid));
    const closed = closeReason(synced);
    const paragraph = new Y.XmlElement("paragraph");
    paragraph.insert(0, [new Y.XmlText(randomText(bytes))]);
    synced.doc.getXmlFragment(NOTE_FRAGMENT).push([paragraph]);
    const outcome = await Promise.race([
      closed,
      expect
        .poll(async () => (await storedText(t, uuid)).length, { timeout: 30_000, interval: 200 })
        .toBeGreaterThanOrEqual(before + bytes)
        .then(() => "stored"),
    ]);
    synced.close();
    return outcome;
  }

  it("refuses sync updates past the document size limit and past the user's quota, storing none of them", {
    timeout: 120_000,
  }, async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Big", content: "start" } })).result;
    expect(await appendOverSync(note.uuid, 40 * KiB)).toBe("stored");
    expect(await appendOverSync(note.uuid, 40 * KiB)).toBe("document_too_large");
    expect((await storedText(t, note.uuid)).length).toBeLessThan(50 * KiB);

    // Five notes of 40 KiB each: the quota (192 KiB, counting every document) runs out on one of them.
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { note: other } = (await alice.client.call("createNote", { body: { title: `Other ${i}`, content: "x" } })).result;
      outcomes.push(await appendOverSync(other.uuid, 40 * KiB));
    }
    expect(outcomes).toContain("storage_quota_exceeded");
    expect(outcomes.slice(outcomes.indexOf("storage_quota_exceeded"))).toEqual(
      outcomes.slice(outcomes.indexOf("storage_quota_exceeded")).map(() => "storage_quota_exceeded"),
    );
    // REST writes and snapshots meet the same quota with a 413.
    const created = await alice.client.raw("createNote", { body: { title: "More", content: randomText(40 * KiB) } });
    expect(created.status).toBe(413);
    expect(created.body).toMatchObject({ success: false, error: "storage_quota_exceeded" });
    const snapshot = await alice.client.raw("createSnapshot", { params: { noteId: note.id }, body: { label: "one more" } });
    expect(snapshot.status).toBe(413);
  });

  it("lets a user past their quota open and follow notes over sync: only growth is refused", { timeout: 60_000 }, async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Kept", content: "still readable" } })).result;
    // The quota lowered below what alice stores (as an administrator might): opening a note sends the
    // server an empty update (the client has nothing the server lacks), which must not be refused.
    const { limits } = t.server.context.sync.quota;
    const quota = limits.userQuotaBytes;
    limits.userQuotaBytes = 1;
    const name = noteDocName(note.uuid);
    const reader = await openDoc(t.server.syncUrl, alice.apiKey, name);
    const watcher = await openDoc(t.server.syncUrl, alice.apiKey, name);
    try {
      expect(reader.outcome).toBe("synced");
      expect(jsonToText(readNoteBody(reader.doc))).toContain("still readable");
      // The reader's connection stays open: its awareness, sent after its empty update, reaches the watcher.
      const readerClosed = closeReason(reader);
      reader.provider.setAwarenessField("user", { name: "reader" });
      const seen = new Promise<"seen">((resolve) => {
        const check = () => {
          for (const state of watcher.provider.awareness?.getStates().values() ?? []) if (state.user?.name === "reader") resolve("seen");
        };
        watcher.provider.awareness?.on("change", check);
        check();
      });
      expect(await Promise.race([seen, readerClosed])).toBe("seen");
      // Growth is still refused.
      appendParagraph(reader.doc, "more");
      expect(await readerClosed).toBe("storage_quota_exceeded");
    } finally {
      limits.userQuotaBytes = quota;
      reader.close();
      watcher.close();
    }
  });
});

describe("updates a read-only viewer sends", () => {
  const KiB = 1024;
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => {
    t = await startTestServer({ maxDocumentBytes: 64 * KiB });
    [alice, bob] = [await t.addUser("alice"), await t.addUser("bob")];
  });
  afterAll(() => t.stop());

  it("count against nothing: the owner can still fill the document up to its limit", { timeout: 60_000 }, async () => {
    const folderId = (await alice.client.call("createFolder", { body: { path: "Shared" } })).folder.id;
    const { note } = (await alice.client.call("createNote", { body: { title: "Shared", content: "start", folderId } })).result;
    await alice.client.call("shareFolder", { params: { id: folderId }, body: { username: "bob", role: "viewer" } });
    // The owner keeps the document loaded while the viewer sends updates, which are dropped
    // unapplied; were they counted, the document would look full.
    const owner = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(note.uuid));
    const refused = closeReason(owner);
    const viewer = await openDoc(t.server.syncUrl, bob.apiKey, noteDocName(note.uuid));
    for (let i = 0; i < 3; i++) {
      const paragraph = new Y.XmlElement("paragraph");
      paragraph.insert(0, [new Y.XmlText(randomText(30 * KiB))]);
      viewer.doc.getXmlFragment(NOTE_FRAGMENT).push([paragraph]);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    viewer.close();
    const paragraph = new Y.XmlElement("paragraph");
    paragraph.insert(0, [new Y.XmlText(randomText(40 * KiB))]);
    owner.doc.getXmlFragment(NOTE_FRAGMENT).push([paragraph]);
    const outcome = await Promise.race([
      refused,
      expect
        .poll(async () => (await storedText(t, note.uuid)).length, { timeout: 30_000, interval: 100 })
        .toBeGreaterThan(40 * KiB)
        .then(() => "stored"),
    ]);
    owner.close();
    expect(outcome).toBe("stored");
  });
});

describe("document size limit over REST", () => {
  const KiB = 1024;
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer({ maxDocumentBytes: 64 * KiB });
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("answers 413 document_too_large to a body past the limit and keeps the note as it was", async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Small", content: "small" } })).result;
    const patched = await alice.client.raw("updateNote", { params: { id: note.id }, body: { content: `<p>${randomText(80 * KiB)}</p>` } });
    expect(patched.status).toBe(413);
    expect(patched.body).toMatchObject({ success: false, error: "document_too_large" });
    expect(await storedText(t, note.uuid)).toBe("small");
    const created = await alice.client.raw("createNote", { body: { title: "Huge", content: randomText(80 * KiB) } });
    expect(created.status).toBe(413);
  });

  it("replaces a nearly full note with a shorter body: judged by the note it makes, not the bytes it adds", async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Full", content: "x" } })).result;
    const full = await alice.client.raw("updateNote", { params: { id: note.id }, body: { content: `<p>${randomText(60 * KiB)}</p>` } });
    expect(full.status).toBe(200);
    // A body more than the room left, yet far shorter than the one it replaces.
    const room = 64 * KiB - ((await t.server.context.sync.store.load(noteDocName(note.uuid)))?.length ?? 0);
    const text = randomText(room + 512);
    const shorter = await alice.client.raw("updateNote", { params: { id: note.id }, body: { content: `<p>${text}</p>` } });
    expect(shorter.status).toBe(200);
    expect(await storedText(t, note.uuid)).toBe(text);
  });

  it("thins out automatic snapshots with age and keeps every snapshot a person took", async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "History", content: "v0" } })).result;
    const { db } = t.server.context;
    const now = Date.now();
    const hour = 3_600_000;
    const day = 24 * hour;
    // Buckets are clock hours and UTC days, so the times are placed inside them, not at ages from now
    // (three snapshots 30 to 30.4 hours ago span two clock hours when the test runs early in an hour).
    const hourBucket = Math.floor((now - 30 * hour) / hour) * hour;
    const dayBucket = Math.floor((now - 10 * day) / day) * day;
    const times = [
      ...[2, 3, 4, 5].map((h) => now - h * hour), // the last day: all kept
      ...[5, 15, 25].map((minutes) => hourBucket + minutes * 60_000), // within the week: one per hour…
      hourBucket - hour / 2, // …and the hour before
      ...[1, 2, 3].map((h) => dayBucket + h * hour), // older: one per day…
      dayBucket - 2 * day + hour, // …and a day two days before
    ];
    const state = Y.encodeStateAsUpdate(new Y.Doc());
    let seq = 100;
    for (const time of times) {
      const createdAt = new Date(time).toISOString();
      await db
        .insertInto("snapshots")
        .values({
          note_uuid: note.uuid,
          owner_id: alice.userId,
          seq: seq++,
          label: "Before update",
          state,
          word_count: 0,
          created_at: createdAt,
          automatic: 1,
        })
        .execute();
    }
    await db
      .insertInto("snapshots")
      .values({
        note_uuid: note.uuid,
        owner_id: alice.userId,
        seq: seq++,
        label: "mine",
        state,
        word_count: 0,
        created_at: new Date(now - 20 * 24 * hour).toISOString(),
        automatic: 0,
      })
      .execute();
    await alice.client.call("updateNote", { params: { id: note.id }, body: { content: "<p>v1</p>" } });
    const { snapshots } = await alice.client.call("listSnapshots", { params: { noteId: note.id }, query: { limit: 100 } });
    // 4 from the last day, 2 hours (30 and 31), 2 days (10 and 12 days ago), the manual one, and the new one.
    expect(snapshots.length).toBe(4 + 2 + 2 + 1 + 1);
    expect(snapshots.map((s) => s.label)).toContain("mine");
  });
});

/** Text that no compression or Yjs encoding shrinks: random letters. */
function randomText(length: number): string {
  const letters = "abcdefghijklmnopqrstuvwxyz";
  let text = "";
  for (let i = 0; i < length; i++) text += letters[Math.floor(Math.random() * letters.length)];
  return text;
}

describe.each(storages())("a 10-million-character word (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("is stored over sync with its views written, and reads back", { timeout: 120_000 }, async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Word", content: "start" } })).result;
    const synced = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(note.uuid));
    const paragraph = new Y.XmlElement("paragraph");
    paragraph.insert(0, [new Y.XmlText("w".repeat(10_000_000))]);
    synced.doc.getXmlFragment(NOTE_FRAGMENT).push([paragraph]);
    await expect.poll(async () => (await storedText(t, note.uuid)).length, { timeout: 60_000, interval: 500 }).toBeGreaterThan(10_000_000);
    synced.close();
    await expect
      .poll(async () => (await alice.client.call("listNotes", { query: {} })).notes.find((n) => n.id === note.id)?.wordCount, {
        timeout: 60_000,
        interval: 500,
      })
      .toBe(2);
    const read = await alice.client.raw("getNote", { params: { id: note.id } });
    expect(read.status).toBe(200);
    const found = await alice.client.raw("searchNotes", { body: { query: "start" } });
    expect(found.status).toBe(200);
    // Over REST the body limit may refuse it first; either way it is never a 500.
    const created = await alice.client.raw("createNote", { body: { title: "Word", content: "w".repeat(10_000_000) } });
    expect([201, 413]).toContain(created.status);
    if (created.status === 201) {
      const { id } = (created.body as { result: { note: { id: number } } }).result.note;
      expect((await alice.client.raw("getNote", { params: { id } })).status).toBe(200);
    }
  });
});
