/**
 * A count of things waiting for the owner on the server (the tray's and the Approvals badge's),
 * kept by polling: {@link start} reads it at once and then every `intervalMs`, {@link refresh}
 * re-reads it now (after an answer, or an event saying it moved). Concurrent refreshes share one
 * read, plus one more if asked for meanwhile, so a refresh asked for after a change always sees it.
 * `onCountChange` is called when the count moves.
 */
export abstract class PendingCount {
  #pending = 0;
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;
  #again = false;

  constructor(
    private readonly intervalMs: number,
    private readonly onCountChange: () => void,
  ) {}

  /** Reads the count from the server; undefined (offline, say) keeps the last one. */
  protected abstract readCount(): Promise<number | undefined>;

  pendingCount(): number {
    return this.#pending;
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.refresh(), this.intervalMs);
    void this.refresh();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  refresh(): Promise<void> {
    if (this.#refreshing) {
      this.#again = true;
      return this.#refreshing;
    }
    this.#refreshing = (async () => {
      do {
        this.#again = false;
        await this.#read();
      } while (this.#again);
    })().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #read(): Promise<void> {
    const count = await this.readCount();
    if (count === undefined || count === this.#pending) return;
    this.#pending = count;
    this.onCountChange();
  }
}
