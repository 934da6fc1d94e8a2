import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { tempDir } from "../../../test/host-harness";
import { LocalDocumentStore } from "./document-store";
import { LOCAL_DATABASE_FILE, openLocalStore } from "./local-store";

describe("the local store", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const dataDir = async () => {
    const dir = await tempDir("tandem-desktop-store-");
    dirs.push(dir);
    return dir;
  };

  it("creates the tables and keeps settings across reopening", async () => {
    const dir = await dataDir();
    let store = await openLocalStore(dir);
    expect(await store.getSetting("missing")).toBeNull();
    await store.setSetting("theme", "calm");
    await store.setSetting("theme", "calmer");
    await store.setSetting("gone", "soon");
    await store.setSetting("gone", null);
    await store.db
      .insertInto("bridge_spool")
      .values({
        message_id: "msg_1",
        delivery_id: "dlv_1",
        communication_session_id: "cs_1",
        envelope: "{}",
        state: "received",
        reason: null,
        received_at: "2026-01-01T00:00:00.000Z",
        updated_at: "2026-01-01T00:00:00.000Z",
      })
      .execute();
    await store.close();

    store = await openLocalStore(dir);
    expect(await store.getSetting("theme")).toBe("calmer");
    expect(await store.getSetting("gone")).toBeNull();
    expect(await store.db.selectFrom("bridge_spool").select("state").execute()).toEqual([{ state: "received" }]);
    await store.close();
  });

  it("keeps documents per account, with their unsynced flag, written in batches", async () => {
    const store = await openLocalStore(await dataDir());
    const ada = new LocalDocumentStore(store.db, "http://127.0.0.1:1#1");
    const grace = new LocalDocumentStore(store.db, "http://127.0.0.1:1#2");
    const docs = Array.from({ length: 30 }, (_, index) => {
      const doc = new Y.Doc();
      doc.getText("t").insert(0, `text ${index}`);
      return doc;
    });
    await Promise.all(docs.map((doc, index) => ada.save(`note:${index}`, doc, index % 2 === 0)));
    await ada.setUnsynced("note:0", false);

    expect((await ada.loadDoc("note:7"))?.getText("t").toString()).toBe("text 7");
    expect(await grace.load("note:7")).toBeUndefined();
    expect(await ada.loadDoc("note:99")).toBeUndefined();
    expect((await ada.unsyncedNames()).sort()).toEqual(
      Array.from({ length: 15 }, (_, index) => `note:${index * 2}`)
        .filter((name) => name !== "note:0")
        .sort(),
    );
    await store.close();
  });

  it("merges updates into stored documents without loading them, beside whole-state writes, keeping the unsynced flag", async () => {
    const store = await openLocalStore(await dataDir());
    const documents = new LocalDocumentStore(store.db, "http://127.0.0.1:1#1");
    const update = (key: string, value: string) => {
      const doc = new Y.Doc();
      doc.getMap("m").set(key, value);
      return Y.encodeStateAsUpdate(doc);
    };
    const local = new Y.Doc();
    local.getMap("m").set("local", "typed here");

    // A merge queued with a whole-state write of the same document: both end up stored.
    await Promise.all([documents.save("note:a", local, true), documents.merge("note:a", update("remote", "from the server"))]);
    expect((await documents.loadDoc("note:a"))?.getMap("m").toJSON()).toEqual({ local: "typed here", remote: "from the server" });
    // A merge on its own reads the stored state; merging the same update again changes nothing.
    const later = update("later", "also from the server");
    await documents.merge("note:a", later);
    await documents.merge("note:a", later);
    expect((await documents.loadDoc("note:a"))?.getMap("m").toJSON()).toEqual({
      local: "typed here",
      remote: "from the server",
      later: "also from the server",
    });
    expect(await documents.unsyncedNames()).toEqual(["note:a"]);
    // No row yet: the update becomes the document, with nothing unconfirmed.
    await documents.merge("note:b", update("only", "remote"));
    expect((await documents.loadDoc("note:b"))?.getMap("m").toJSON()).toEqual({ only: "remote" });
    expect(await documents.unsyncedNames()).toEqual(["note:a"]);
    await store.close();
  });

  it("refuses a second host on the same data directory, saying it is in use", async () => {
    const dir = await dataDir();
    const first = await openLocalStore(dir);
    await expect(openLocalStore(dir)).rejects.toThrow(
      `The local database ${path.join(dir, LOCAL_DATABASE_FILE)} is in use by another Tandem (the desktop app or web mode): quit it, or use another data directory`,
    );
    await first.close();
    const again = await openLocalStore(dir);
    await again.close();
  });

  it("refuses a damaged file, saying what to do", async () => {
    const dir = await dataDir();
    await writeFile(path.join(dir, LOCAL_DATABASE_FILE), "not a database at all, only text. ".repeat(200));
    await expect(openLocalStore(dir)).rejects.toThrow(/is damaged \(not a readable SQLite database\): move it aside/);
  });
});
