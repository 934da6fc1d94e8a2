import type { TandemClient } from "@tandem/core";

/** The largest page the notes list route gives. */
const PAGE = 200;
/** Folders listed at once while looking a note up everywhere. */
const PARALLEL_FOLDERS = 6;

/**
 * The server's REST routes name notes by numeric id; the documents (and so the renderer) by
 * uuid. The note list answers both, so this directory learns pairs from it and remembers them
 * for the session: ids never change and uuids are never reused.
 */
export class NoteIdDirectory {
  readonly #client: TandemClient;
  readonly #idByUuid = new Map<string, number>();
  readonly #uuidById = new Map<number, string>();

  constructor(client: TandemClient) {
    this.#client = client;
  }

  /** The note's id on the server; undefined when the server has no such note (yet: it may not have synced). */
  async idOf(uuid: string): Promise<number | undefined> {
    if (!this.#idByUuid.has(uuid)) await this.#learnEverywhere();
    return this.#idByUuid.get(uuid);
  }

  /**
   * The uuid of a note the server named by id. Call {@link learnFolders} with the folders of a
   * batch of ids first; a note it did not find (past the first page of a big folder) is fetched.
   */
  async uuidOf(id: number): Promise<string> {
    const known = this.#uuidById.get(id);
    if (known) return known;
    const { note } = await this.#client.call("getNote", { params: { id } });
    this.#remember(note.id, note.uuid);
    return note.uuid;
  }

  /** Learns the notes of several folders at once (a search's hits name a few). */
  async learnFolders(folderIds: Iterable<number | null>): Promise<void> {
    const pending = [...new Set(folderIds)];
    for (let start = 0; start < pending.length; start += PARALLEL_FOLDERS) {
      await Promise.all(pending.slice(start, start + PARALLEL_FOLDERS).map((folderId) => this.#learnFolder(folderId)));
    }
  }

  knows(id: number): boolean {
    return this.#uuidById.has(id);
  }

  async #learnEverywhere(): Promise<void> {
    const { folders } = await this.#client.call("listFolders", { query: {} });
    await this.learnFolders([null, ...folders.map((folder) => folder.id)]);
  }

  async #learnFolder(folderId: number | null): Promise<void> {
    const query = folderId === null ? { limit: PAGE } : { folderId, limit: PAGE };
    const { notes } = await this.#client.call("listNotes", { query });
    for (const note of notes) this.#remember(note.id, note.uuid);
  }

  #remember(id: number, uuid: string): void {
    this.#idByUuid.set(uuid, id);
    this.#uuidById.set(id, uuid);
  }
}
