import { Hocuspocus } from "@hocuspocus/server";
import { describe, expect, it } from "vitest";
import { UnloadSafeHocuspocus } from "./unload-safe-hocuspocus";

/**
 * Opens a document, closes it (it unloads), opens it again, then replays the first document's
 * unload late, as a store-then-unload timer does. Answers whether the hub still holds the reopened
 * document afterwards.
 */
async function keepsReopenedDocumentAfterLateUnload(hub: Hocuspocus): Promise<boolean> {
  const first = await hub.openDirectConnection("note");
  const stale = first.document;
  if (!stale) throw new Error("the direct connection has no document");
  await first.disconnect();
  expect(hub.documents.has("note")).toBe(false);
  const second = await hub.openDirectConnection("note");
  const reopened = second.document;
  await hub.unloadDocument(stale);
  const kept = hub.documents.get("note") === reopened;
  await second.disconnect();
  // An orphaned document is never unloaded: destroy it here, or its awareness timer runs on.
  if (!kept) reopened?.destroy();
  return kept;
}

describe("UnloadSafeHocuspocus", () => {
  it("keeps a reopened document when the previous one's unload arrives late", async () => {
    expect(await keepsReopenedDocumentAfterLateUnload(new UnloadSafeHocuspocus())).toBe(true);
  });

  // When this starts failing, Hocuspocus checks the document itself and this package can go.
  it("is needed: plain Hocuspocus drops the reopened document from its map", async () => {
    expect(await keepsReopenedDocumentAfterLateUnload(new Hocuspocus())).toBe(false);
  });
});
