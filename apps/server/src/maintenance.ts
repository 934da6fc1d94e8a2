import type { Logger } from "pino";

export type MaintenanceTask = () => Promise<unknown>;

/**
 * Periodic housekeeping that must happen even when no request arrives: expiring grants,
 * approvals and pairings, running due heartbeats. Every task is also safe to run on demand (tests
 * call {@link runAll}), and each service checks expiry lazily on read, so a stopped timer never
 * leaves a stale state. A task runs at most once at a time, and a slow one (a batch of heartbeats)
 * does not hold the others back: each tick starts every task that is not still running.
 */
export class Maintenance {
  readonly #tasks = new Map<string, MaintenanceTask>();
  readonly #running = new Map<string, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;

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

  /** Runs every task once; a task still running from an earlier call is waited for, not started again. */
  async runAll(): Promise<void> {
    await Promise.all([...this.#tasks.keys()].map((name) => this.#run(name)));
  }

  #run(name: string): Promise<void> {
    let running = this.#running.get(name);
    if (!running) {
      const task = this.#tasks.get(name) as MaintenanceTask;
      running = (async () => {
        try {
          await task();
        } catch (error) {
          this.logger.error({ err: error, task: name }, "maintenance task failed");
        }
      })().finally(() => this.#running.delete(name));
      this.#running.set(name, running);
    }
    return running;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await Promise.all(this.#running.values());
  }
}
