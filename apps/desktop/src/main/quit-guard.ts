/** What the quit guard needs from Electron and the host; injected so it is tested without them. */
export interface QuitGuardDeps {
  /** Documents whose changes the server has not confirmed (`host.unsyncedDocuments()`). */
  unsyncedDocuments(): number;
  /** Edits the page has not saved, in words (`host.unsavedWork()`), or null. */
  unsavedWork(): string | null;
  /** Asks the owner; true means quit anyway. */
  confirmQuit(message: string, unsynced: number): boolean;
  /** Stops replication, the bridge and the local store cleanly (`host.close()`). */
  closeHost(): Promise<void>;
  /** Quits for real (`app.quit()`); the guard lets that second `before-quit` through. */
  quit(): void;
  onCloseError(error: unknown): void;
}

export interface QuitGuard {
  /** For `app.on("before-quit")`. */
  onBeforeQuit(event: { preventDefault(): void }): void;
  /** True once quitting has been decided: windows then close instead of hiding to the tray. */
  readonly quitting: boolean;
}

/**
 * Quitting is held back until the host has closed, because closing flushes the local store and
 * ends the bridge's session cleanly; and it asks first when local changes have not reached the
 * server (they are safe on disk, but would not reach other devices until the next launch), or
 * when the page holds edits not saved anywhere (they would be lost).
 */
export function createQuitGuard(deps: QuitGuardDeps): QuitGuard {
  let phase: "running" | "closing" | "closed" = "running";
  return {
    get quitting() {
      return phase !== "running";
    },
    onBeforeQuit(event) {
      if (phase === "closed") return;
      event.preventDefault();
      if (phase === "closing") return;
      const unsynced = deps.unsyncedDocuments();
      const unsaved = deps.unsavedWork();
      if ((unsynced > 0 || unsaved !== null) && !deps.confirmQuit(quitWarning(unsynced, unsaved), unsynced)) return;
      phase = "closing";
      deps
        .closeHost()
        .catch(deps.onCloseError)
        .finally(() => {
          phase = "closed";
          deps.quit();
        });
    },
  };
}

export function quitWarning(unsynced: number, unsaved: string | null = null): string {
  const documents =
    unsynced === 0
      ? null
      : unsynced === 1
        ? "1 document has changes not yet on the server."
        : `${unsynced} documents have changes not yet on the server.`;
  return [unsaved, documents, "Quit anyway?"].filter(Boolean).join(" ");
}
