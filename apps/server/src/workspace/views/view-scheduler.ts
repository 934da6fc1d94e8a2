/**
 * Runs view updates for documents, never two at once for the same document (each would
 * otherwise read the view, then race to write it).
 */
export class ViewScheduler {
  readonly #running = new Map<string, Promise<void>>();
  readonly #listeners: ((documentName: string) => void)[] = [];

  constructor(private readonly update: (documentName: string) => Promise<void>) {}

  /** Updates the view now, after any update already running for the same document. */
  run(documentName: string): Promise<void> {
    const previous = this.#running.get(documentName) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(() => this.update(documentName))
      .then(() => {
        for (const listener of this.#listeners) listener(documentName);
      });
    this.#running.set(documentName, next);
    const cleanup = () => {
      if (this.#running.get(documentName) === next) this.#running.delete(documentName);
    };
    next.then(cleanup, cleanup);
    return next;
  }

  /** Calls `listener` after each successful update (synchronously: it must only schedule work). */
  onUpdated(listener: (documentName: string) => void): void {
    this.#listeners.push(listener);
  }

  /** Waits for every running update; used at shutdown. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.#running.values()]);
  }
}
