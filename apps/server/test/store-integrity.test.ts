import { jsonToText, NOTE_FRAGMENT, noteDocName, readNoteBody } from "@tandem/core";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

/** The text of a note's document as it is stored, read straight from the documents table. */
async function storedText(t: TestServer, uuid: string): Promise<string> {
  return jsonToText(readNoteBody(await t.server.context.sync.store.loadDoc(noteDocName(uuid))));
}

/** Makes every write to the documents table fail inside SQLite, as a full disk would. */
async function breakDocumentStorage(t: TestServer): Promise<{ repair(): Promise<void> }> {
  const { db } = t.server.context;
  await sql`create trigger fail_insert before insert on documents begin select raise(abort, 'database or disk is full'); end`.execute(db);
  await sql`create trigger fail_update before update on documents begin select raise(abort, 'database or disk is full'); end`.execute(db);
  return {
    async repair() {
      await sql`drop trigger fail_insert`.execute(db);
      await sql`drop trigger fail_update`.execute(db);
    },
  };
}

describe("document storage failures", () => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("answers a REST write 503 while storage fails, keeps the change in memory and stores it once storage recovers", { timeout: 60_000 }, async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Durable", content: "before" } })).result;
    const storage = await breakDocumentStorage(t);
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

      await storage.repair();
      repaired = true;
      await expect.poll(() => storedText(t, note.uuid), { timeout: 30_000, interval: 200 }).toBe("after");
    } finally {
      if (!repaired) await storage.repair();
    }
    const read = await alice.client.call("getNote", { params: { id: note.id } });
    expect(read.note.markdown.trim()).toBe("after");
  });
});
