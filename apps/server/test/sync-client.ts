import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import { NOTE_FRAGMENT } from "@tandem/core";
import WebSocket from "ws";
import * as Y from "yjs";

export interface SyncedDoc {
  outcome: "synced" | "refused";
  doc: Y.Doc;
  provider: HocuspocusProvider;
  socket: HocuspocusProviderWebsocket;
  close(): void;
}

/** Opens a document over real WebSockets, as a third-party client would, and waits for the first sync. */
export async function openDoc(url: string, token: string, documentName: string, doc = new Y.Doc()): Promise<SyncedDoc> {
  const socket = new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: WebSocket as never });
  let provider: HocuspocusProvider | undefined;
  const outcome = await new Promise<SyncedDoc["outcome"]>((resolve) => {
    provider = new HocuspocusProvider({
      websocketProvider: socket,
      name: documentName,
      document: doc,
      token,
      onSynced: () => resolve("synced"),
      onAuthenticationFailed: () => resolve("refused"),
    });
    provider.attach();
  });
  return {
    outcome,
    doc,
    provider: provider as HocuspocusProvider,
    socket,
    close: () => {
      provider?.destroy();
      socket.destroy();
    },
  };
}

/** Resolves once `check` holds, tested now and at each of the document's updates (no polling). */
export function until(doc: Y.Doc, check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      doc.off("update", onUpdate);
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    const onUpdate = () => {
      if (!check()) return;
      clearTimeout(timer);
      doc.off("update", onUpdate);
      resolve();
    };
    doc.on("update", onUpdate);
  });
}

/** Appends a paragraph to a note's body, as an editor typing at the end would. */
export function appendParagraph(doc: Y.Doc, text: string): void {
  const paragraph = new Y.XmlElement("paragraph");
  paragraph.insert(0, [new Y.XmlText(text)]);
  doc.getXmlFragment(NOTE_FRAGMENT).push([paragraph]);
}
