import { readFolders, readNotes } from "@tandem/core";
import type * as Y from "yjs";
import type { WorkspaceOutline } from "../../shared/desktop-api";

/**
 * How long after a store of the workspace its outline is written. Not reset by later stores: while
 * the workspace keeps changing (a note's time touched as its owner types), the outline is written at
 * most this often, each time reading every entry (tens of ms for 20,000 notes).
 */
export const OUTLINE_DELAY_MS = 5_000;

export interface OutlineSettings {
  get(): Promise<string | null>;
  set(value: string): Promise<void>;
}

/** Every note and folder entry of a workspace document (the Trash's too). */
export function outlineOf(doc: Y.Doc): WorkspaceOutline {
  return { notes: [...readNotes(doc)], folders: [...readFolders(doc)] };
}

function isOutline(value: unknown): value is WorkspaceOutline {
  const outline = value as Partial<WorkspaceOutline> | null;
  return typeof outline === "object" && outline !== null && Array.isArray(outline.notes) && Array.isArray(outline.folders);
}

/**
 * The workspace's outline on this machine: its notes and folders as plain JSON, written a moment
 * after the workspace document is stored. A cold start shows it at once, while the workspace
 * document itself (one Yjs document with an entry per note: for 20,000 notes, a second to load on
 * each side of the local hub) is still loading. It may lag the document by a few seconds (a crash
 * right after a change); the live document replaces it as soon as it is loaded.
 */
export class WorkspaceOutlineKeeper {
  readonly #settings: OutlineSettings;
  #doc: Y.Doc | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(settings: OutlineSettings) {
    this.#settings = settings;
  }

  /** The workspace was stored (or loaded when no outline was saved yet): its outline is written a moment later. */
  schedule(doc: Y.Doc): void {
    this.#doc = doc;
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.#write(), OUTLINE_DELAY_MS);
    this.#timer.unref();
  }

  async read(): Promise<WorkspaceOutline | null> {
    const saved = await this.#settings.get();
    if (saved === null) return null;
    try {
      const outline: unknown = JSON.parse(saved);
      return isOutline(outline) ? outline : null;
    } catch {
      return null;
    }
  }

  async exists(): Promise<boolean> {
    return (await this.#settings.get()) !== null;
  }

  /** Writes a scheduled outline now (before the hub closes), and waits for writes under way. */
  async flush(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#write();
    }
    await this.#writing;
  }

  #write(): void {
    this.#timer = undefined;
    const doc = this.#doc;
    if (!doc) return;
    const outline = JSON.stringify(outlineOf(doc));
    this.#writing = this.#writing
      .then(() => this.#settings.set(outline))
      .catch((error: unknown) => {
        // Only the first view of the next start is affected: it waits for the workspace document.
        console.warn("Tandem: could not save the workspace outline:", error instanceof Error ? error.message : error);
      });
  }
}
