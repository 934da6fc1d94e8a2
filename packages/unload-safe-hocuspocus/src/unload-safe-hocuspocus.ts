import { type Document, Hocuspocus } from "@hocuspocus/server";

/**
 * Hocuspocus (4.7) checks by name whether a document is still loaded before unloading it. A late
 * unload of a document that has since been reloaded (the store-then-unload timer of a write that
 * ran before the next one reopened the document) therefore drops the new document from its map
 * without destroying it: its awareness timer then runs for ever and keeps the process from exiting
 * at shutdown. Only the document the map holds may be unloaded. The server's sync hub and the
 * desktop's local hub (whose replication opens and closes notes often) both use this class.
 */
export class UnloadSafeHocuspocus<Context = unknown> extends Hocuspocus<Context> {
  override async unloadDocument(document: Document): Promise<void> {
    if (this.documents.get(document.name) === document) await super.unloadDocument(document);
  }
}
