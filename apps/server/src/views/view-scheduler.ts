/**
 * Runs view updates for documents, never two at once for the same document (each would
 * otherwise read the view, then race to write it).
 */
export class ViewScheduler {
  readonly #running = new Map<string, Promise<void>>();

  constructor(private readonly update: (documentName: string) => Promise<void>) {}

  /** Updates the view now, after any update already running for the same document. */
  run(documentName: string): Promise<void> {
    const previous = this.#running.get(documentName) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => this.update(documentName));
    this.#running.set(documentName, next);
    const cleanup = () => {
      if (this.#running.get(documentName) === next) this.#running.delete(documentName);
    };
    next.then(cleanup, cleanup);
    return next;
  }

  /** Waits for every running update; used at shutdown. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.#running.values()]);
  }
}
