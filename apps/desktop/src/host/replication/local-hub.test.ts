import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import type { Document } from "@hocuspocus/server";
import { afterEach, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { tempDir } from "../../../test/host-harness";
import { LocalDocumentStore } from "../store/document-store";
import { openLocalStore } from "../store/local-store";
import { LocalHub } from "./local-hub";

describe("local hub", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function startHubWithStore(): Promise<{ hub: LocalHub; documents: LocalDocumentStore }> {
    const dataDir = await tempDir("tandem-local-hub-");
    const store = await openLocalStore(dataDir);
    const documents = new LocalDocumentStore(store.db, "http://127.0.0.1:1#1");
    const hub = await LocalHub.start({ userId: 1, store: documents });
    cleanups.push(
      () => rm(dataDir, { recursive: true, force: true }),
      () => store.close(),
      () => hub.close(),
    );
    return { hub, documents };
  }

  async function startHub(): Promise<LocalHub> {
    return (await startHubWithStore()).hub;
  }

  /** An update from "the server": a title set by another client. */
  function remoteUpdate(title: string): Uint8Array {
    const doc = new Y.Doc();
    doc.getMap("note").set("title", title);
    return Y.encodeStateAsUpdate(doc);
  }

  it("stores a document once per change: opening and closing it unchanged writes nothing", async () => {
    const { hub, documents } = await startHubWithStore();
    const name = `note:${randomUUID()}`;
    const writes: string[] = [];
    const save = documents.save.bind(documents);
    documents.save = (written, doc, unsynced) => {
      writes.push(written);
      return save(written, doc, unsynced);
    };

    const first = await hub.openDirectConnection(name);
    await first.transact((doc) => doc.getMap("note").set("title", "typed"));
    await first.disconnect();
    expect(writes).toEqual([name]);
    expect(hub.isUnsynced(name)).toBe(true);

    const again = await hub.openDirectConnection(name);
    expect(again.document?.getMap("note").get("title")).toBe("typed");
    await again.disconnect();
    expect(writes).toEqual([name]);
  });

  it("merges an update from the server into a closed document's stored copy without opening it, keeping its unsynced mark", async () => {
    const { hub, documents } = await startHubWithStore();
    const name = `note:${randomUUID()}`;
    const local = await hub.openDirectConnection(name);
    await local.transact((doc) => doc.getMap("note").set("body", "typed offline"));
    await local.disconnect();

    await hub.applyRemote(name, remoteUpdate("from the server"));
    expect(hub.isLoaded(name)).toBe(false);
    const stored = await documents.loadDoc(name);
    expect(stored?.getMap("note").toJSON()).toEqual({ body: "typed offline", title: "from the server" });
    expect(await documents.unsyncedNames()).toEqual([name]);

    // A note without a copy here gets one, with nothing unconfirmed.
    const fresh = `note:${randomUUID()}`;
    await hub.applyRemote(fresh, remoteUpdate("new"));
    expect((await documents.loadDoc(fresh))?.getMap("note").get("title")).toBe("new");
    expect(await documents.unsyncedNames()).toEqual([name]);
  });

  it("applies an update from the server to a document open meanwhile, not as a local change", async () => {
    const { hub } = await startHubWithStore();
    const name = `note:${randomUUID()}`;
    // The merge is on its way to disk while the document opens: the open copy gets it either way.
    const merging = hub.applyRemote(name, remoteUpdate("arrived while opening"));
    const open = await hub.openDirectConnection(name);
    await merging;
    expect(open.document?.getMap("note").get("title")).toBe("arrived while opening");

    await hub.applyRemote(name, remoteUpdate("arrived while open"));
    expect(open.document?.getMap("note").get("title")).toMatch(/^arrived while/);
    expect(hub.isUnsynced(name)).toBe(false);
    expect(hub.localChangeMark(name)).toBe(0);
    await open.disconnect();
  });

  it("keeps a reopened note when a late unload of its previous opening runs", async () => {
    const hub = await startHub();
    const name = `note:${randomUUID()}`;

    const first = await hub.openDirectConnection(name);
    const firstDocument = first.document as Document;
    await first.transact((doc) => doc.getMap("note").set("title", "one"));
    await first.disconnect();
    expect(firstDocument.isDestroyed).toBe(true);

    const second = await hub.openDirectConnection(name);
    const secondDocument = second.document as Document;
    expect(secondDocument).not.toBe(firstDocument);
    // What the store-then-unload timer of the first opening does when it fires after the reopening.
    await hub.hocuspocus.unloadDocument(firstDocument);
    expect(hub.hocuspocus.documents.get(name)).toBe(secondDocument);
    expect(secondDocument.isDestroyed).toBe(false);

    await second.disconnect();
    // Closing the note unloads and destroys it: nothing (no awareness timer) is left running.
    expect(hub.hocuspocus.documents.size).toBe(0);
    expect(secondDocument.isDestroyed).toBe(true);
  });
});
