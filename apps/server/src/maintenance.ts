import type { Logger } from "pino";

export type MaintenanceTask = () => Promise<unknown>;

/**
 * Periodic housekeeping that must happen even when no request arrives: expiring grants,
 * approvals and pairings. Every task is also safe to run on demand (tests call {@link runAll}),
 * and each service checks expiry lazily on read, so a stopped timer never leaves a stale state.
 */
export class Maintenance {
  readonly #tasks = new Map<string, MaintenanceTask>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  add(name: string, task: MaintenanceTask): void {
    this.#tasks.set(name, task);
  }

  start(): void {
    if (this.intervalMs <= 0 || this.#timer) return;
    this.#timer = setInterval(() => void this.runAll(), this.intervalMs);
    this.#timer.unref();
  }

  /** Runs every task once; overlapping calls share one run. */
  runAll(): Promise<void> {
    this.#running ??= (async () => {
      for (const [name, task] of this.#tasks) {
        try {
          await task();
        } catch (error) {
          this.logger.error({ err: error, task: name }, "maintenance task failed");
        }
      }
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
