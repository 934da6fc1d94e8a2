import type { Extension, LocalTransactionOrigin, onStoreDocumentPayload } from "@hocuspocus/server";
import type { Logger } from "pino";
import type * as Y from "yjs";
import type { DocumentStore } from "./document-store";

/** The first retry of a failed store comes after this long, doubling up to the maximum. */
export const STORE_RETRY_MS = 1000;
export const STORE_RETRY_MAX_MS = 60_000;

/**
 * The origin of what a store merges in from storage (another process's store): sent to the
 * document's connections like any change, but not stored again, as the store writing it is under way.
 */
const MERGED_FROM_STORAGE: LocalTransactionOrigin = { source: "local", skipStoreHooks: true };

/**
 * Makes a failed document store visible and survivable. Hocuspocus logs a failed
 * `onStoreDocument` and carries on, and unloads the document as soon as its last connection
 * goes, losing the change. Here a document whose store failed stays in memory, is stored again
 * with a growing delay until storage accepts it, and is refused unloading until then; REST writes
 * ask {@link DurableStore.isUnsaved} to answer 503 instead of 2xx.
 */
export class DurableStore {
  /** Documents whose last store failed: what to store again, and the delay before the next retry. */
  readonly #unsaved = new Map<string, { payload: onStoreDocumentPayload; delayMs: number; timer?: NodeJS.Timeout }>();
  #closing = false;

  constructor(
    private readonly store: DocumentStore,
    private readonly logger: Logger,
    /** After each successful store; `recovered` when earlier stores of the document had failed. */
    private readonly onStored: (name: string, bytes: number, recovered: boolean) => void,
  ) {}

  /** Whether the document's last store failed, so its latest change is only in memory. */
  isUnsaved(name: string): boolean {
    return this.#unsaved.has(name);
  }

  /** The Hocuspocus hooks: store, retry on failure, and keep unsaved documents loaded. */
  extension(): Extension {
    return {
      onStoreDocument: async (payload) => this.#save(payload),
      beforeUnloadDocument: async ({ documentName }) => {
        // Throwing cancels the unload; at shutdown the last attempt has been made and logged.
        if (!this.#closing && this.#unsaved.has(documentName)) throw new Error(`${documentName} is not stored yet; kept in memory`);
      },
    };
  }

  /**
   * At shutdown, before the last stores: stops retrying and makes one last attempt for each
   * unsaved document. From then on a document whose store fails is unloaded anyway (the loss is
   * logged), so closing never waits on storage that stays broken.
   */
  async close(): Promise<void> {
    this.#closing = true;
    for (const { payload, timer } of [...this.#unsaved.values()]) {
      clearTimeout(timer);
      if (payload.instance.documents.get(payload.documentName) === payload.document) {
        await payload.instance.storeDocumentHooks(payload.document, payload, true);
      }
    }
  }

  async #save(payload: onStoreDocumentPayload): Promise<void> {
    const { documentName, document } = payload;
    let bytes: number;
    try {
      bytes = await this.store.save(documentName, document as Y.Doc, MERGED_FROM_STORAGE);
    } catch (error) {
      const previous = this.#unsaved.get(documentName);
      clearTimeout(previous?.timer);
      const delayMs = previous ? Math.min(previous.delayMs * 2, STORE_RETRY_MAX_MS) : STORE_RETRY_MS;
      const entry: { payload: onStoreDocumentPayload; delayMs: number; timer?: NodeJS.Timeout } = { payload, delayMs };
      if (this.#closing) {
        // Hocuspocus unloads only after a successful store; shutdown must not wait for one.
        setTimeout(() => void payload.instance.unloadDocument(document), 0);
      } else {
        entry.timer = setTimeout(() => this.#retry(payload), delayMs);
        entry.timer.unref();
      }
      this.#unsaved.set(documentName, entry);
      this.logger.error(
        { err: error, document: documentName, retryInMs: this.#closing ? undefined : delayMs },
        this.#closing ? "document store failed at shutdown; its latest changes are lost" : "document store failed; kept in memory",
      );
      throw error;
    }
    const previous = this.#unsaved.get(documentName);
    if (previous) {
      clearTimeout(previous.timer);
      this.#unsaved.delete(documentName);
      this.logger.warn({ document: documentName }, "document stored after earlier failures");
    }
    this.onStored(documentName, bytes, previous !== undefined);
  }

  /** Stores the document again through Hocuspocus, which unloads it afterwards if nobody holds it. */
  #retry(payload: onStoreDocumentPayload): void {
    const { instance, documentName, document } = payload;
    if (instance.documents.get(documentName) !== document) {
      this.#unsaved.delete(documentName);
      return;
    }
    void instance.storeDocumentHooks(document, payload, true);
  }
}
