import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
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
