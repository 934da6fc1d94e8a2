import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import type * as Y from "yjs";
import type { LocalSyncInfo } from "../../shared/desktop-api";

/** How long a document nobody uses stays open, so switching back and forth between notes costs nothing. */
const LINGER_MS = 10_000;

interface Entry {
  readonly provider: HocuspocusProvider;
  users: number;
  /** Replaced (never mutated) on each change, so React can compare snapshots by identity. */
  state: DocumentState;
  readonly listeners: Set<() => void>;
  closeTimer: ReturnType<typeof setTimeout> | null;
}

/** What a caller sees of an open document: its Y.Doc once the local hub has sent its state. */
export type DocumentState =
  | { readonly status: "loading" }
  | { readonly status: "ready"; readonly doc: Y.Doc }
  | { readonly status: "failed"; readonly message: string };

/**
 * The renderer's documents, all over one WebSocket to the host's local sync hub (which keeps them
 * on disk and replicates them with the server). Each document has one provider, shared by every
 * component that opens it and closed a little after the last one lets go.
 */
export class DocumentHub {
  readonly #socket: HocuspocusProviderWebsocket;
  readonly #token: string;
  readonly #entries = new Map<string, Entry>();

  constructor(info: Pick<LocalSyncInfo, "url" | "token">) {
    this.#socket = new HocuspocusProviderWebsocket({ url: info.url });
    this.#token = info.token;
  }

  /** Opens `name` (or reuses it) and counts the caller as a user until it calls the returned release. */
  acquire(name: string): () => void {
    const entry = this.#entries.get(name) ?? this.#open(name);
    entry.users++;
    if (entry.closeTimer) {
      clearTimeout(entry.closeTimer);
      entry.closeTimer = null;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.users--;
      if (entry.users === 0) entry.closeTimer = setTimeout(() => this.#close(name), LINGER_MS);
    };
  }

  state(name: string): DocumentState {
    return this.#entries.get(name)?.state ?? LOADING;
  }

  /** Calls `listener` when `name` becomes ready or fails. */
  subscribe(name: string, listener: () => void): () => void {
    const entry = this.#entries.get(name);
    entry?.listeners.add(listener);
    return () => entry?.listeners.delete(listener);
  }

  destroy(): void {
    for (const name of [...this.#entries.keys()]) this.#close(name);
    this.#socket.destroy();
  }

  #open(name: string): Entry {
    const provider = new HocuspocusProvider({ name, websocketProvider: this.#socket, token: this.#token });
    const entry: Entry = { provider, users: 0, state: LOADING, listeners: new Set(), closeTimer: null };
    const become = (state: DocumentState) => {
      entry.state = state;
      for (const listener of entry.listeners) listener();
    };
    // Only the first sync matters: after a reconnection the document is already there to edit.
    provider.on("synced", () => {
      if (entry.state.status === "loading") become({ status: "ready", doc: provider.document });
    });
    provider.on("authenticationFailed", ({ reason }: { reason: string }) => {
      become({ status: "failed", message: `The local sync hub refused ${name}: ${reason}` });
    });
    this.#entries.set(name, entry);
    // A provider given a shared socket only starts talking once attached.
    provider.attach();
    return entry;
  }

  #close(name: string): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    if (entry.closeTimer) clearTimeout(entry.closeTimer);
    this.#entries.delete(name);
    entry.listeners.clear();
    entry.provider.destroy();
  }
}

const LOADING: DocumentState = Object.freeze({ status: "loading" });
