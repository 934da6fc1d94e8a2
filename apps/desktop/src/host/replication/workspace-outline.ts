import { readFolders, readNotes } from "@tandem/core";
import type * as Y from "yjs";
import { encodeFirstScreen, encodeWorkspaceOutline, OUTLINE_PREFIX } from "../../shared/workspace-outline";

/**
 * How long after a store of the workspace its outline is written. Not reset by later stores: while
 * the workspace keeps changing (a note's time touched as its owner types), the outline is written at
 * most this often, each time reading every entry (tens of ms for 20,000 notes).
 */
export const OUTLINE_DELAY_MS = 5_000;

/** The whole outline, or its first screen (see `WorkspaceOutline.complete`): each is kept as a setting of its own. */
export type OutlinePart = "whole" | "first_screen";

export interface OutlineSettings {
  get(part: OutlinePart): Promise<string | null>;
  set(part: OutlinePart, value: string): Promise<void>;
}

/**
 * The workspace's outline on this machine (see shared/workspace-outline.ts), written a moment after
 * the workspace document is stored. A cold start shows it at once, while the workspace
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

  /**
   * The saved outline's text, unparsed (the page parses it: parsing a few MB here as well would only
   * delay the first view); none when there is none of the current format.
   */
  async read(part: OutlinePart): Promise<string | null> {
    const saved = await this.#settings.get(part);
    return saved?.startsWith(OUTLINE_PREFIX) ? saved : null;
  }

  /** Whether an outline of the current format is saved (one of an older format is replaced once the workspace loads). */
  async exists(): Promise<boolean> {
    return (await this.read("first_screen")) !== null;
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
    const [notes, folders] = [readNotes(doc), readFolders(doc)];
    const whole = encodeWorkspaceOutline(notes, folders);
    const firstScreen = encodeFirstScreen(notes, folders);
    this.#writing = this.#writing
      .then(async () => {
        await this.#settings.set("whole", whole);
        await this.#settings.set("first_screen", firstScreen);
      })
      .catch((error: unknown) => {
        // Only the first view of the next start is affected: it waits for the workspace document.
        console.warn("Tandem: could not save the workspace outline:", error instanceof Error ? error.message : error);
      });
  }
}
