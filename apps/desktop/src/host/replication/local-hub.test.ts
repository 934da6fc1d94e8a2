import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import type { Document } from "@hocuspocus/server";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/host-harness";
import { LocalDocumentStore } from "../store/document-store";
import { openLocalStore } from "../store/local-store";
import { LocalHub } from "./local-hub";

describe("local hub", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function startHub(): Promise<LocalHub> {
    const dataDir = await tempDir("tandem-local-hub-");
    const store = await openLocalStore(dataDir);
    const hub = await LocalHub.start({ userId: 1, store: new LocalDocumentStore(store.db, "http://127.0.0.1:1#1") });
    cleanups.push(
      () => rm(dataDir, { recursive: true, force: true }),
      () => store.close(),
      () => hub.close(),
    );
    return hub;
  }

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
