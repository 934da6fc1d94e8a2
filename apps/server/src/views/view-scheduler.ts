/**
 * Runs view updates for documents: debounced after edits over sync, immediately after a REST
 * write, and never two at once for the same document (each would otherwise read the view, then
 * race to write it).
 */
export class ViewScheduler {
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #running = new Map<string, Promise<void>>();

  constructor(
    private readonly update: (documentName: string) => Promise<void>,
    private readonly delayMs: number,
    private readonly onError: (documentName: string, error: unknown) => void,
  ) {}

  /** Updates the view a little later; repeated calls within the delay coalesce. */
  schedule(documentName: string): void {
    clearTimeout(this.#timers.get(documentName));
    const timer = setTimeout(() => {
      this.#timers.delete(documentName);
      this.run(documentName).catch((error: unknown) => this.onError(documentName, error));
    }, this.delayMs);
    this.#timers.set(documentName, timer);
  }

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

  /** Runs every pending update now; used at shutdown. */
  async flush(): Promise<void> {
    const pending = [...this.#timers.keys()];
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    await Promise.allSettled([...pending.map((name) => this.run(name)), ...this.#running.values()]);
  }
}
