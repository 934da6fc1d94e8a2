import { Worker } from "node:worker_threads";
import { builtFile, RUNS_BUILT } from "../../server-files";
import type { GrepOptions, GrepResult } from "./line-matcher";

export class RegexTimeoutError extends Error {}

/** A caller already has as many regex greps waiting as they may. */
export class RegexQueueFullError extends Error {}

export interface RegexRunnerLimits {
  /** How long one grep may run before its worker is terminated, in ms. */
  readonly timeoutMs: number;
  /** Greps that run at once, each in its own worker thread. */
  readonly workers: number;
  /** Greps one caller may have waiting (besides the one running); more are refused. */
  readonly maxWaitingPerUser: number;
}

/**
 * Takes one of the caller's places (running or waiting) over every server instance, or answers
 * null when they have none left; the function it answers gives the place back.
 */
export type SharedPlaces = (caller: string, max: number) => Promise<(() => void) | null>;

interface Job {
  readonly options: GrepOptions;
  readonly texts: string[];
  resolve(result: GrepResult): void;
  reject(error: unknown): void;
}

/**
 * Runs regex grep in worker threads with a deadline. JavaScript regexes can backtrack for longer
 * than the universe exists and cannot be interrupted in-process; a worker can be terminated.
 * Workers are reused between greps and replaced after a timeout.
 *
 * Fair between callers: each caller runs one grep at a time, waiting callers are served in turn
 * (the one served goes to the back of the line), and a caller's waiting line is capped. One
 * caller's catastrophic patterns therefore occupy at most one worker and never hold up anyone
 * else's grep behind their own queue. A caller is whoever asks (see `grepQueueOf`), not whose
 * notes are searched: a guest or a contact searching the owner's notes waits in a line of their
 * own, so they cannot fill the owner's.
 */
export class RegexRunner {
  readonly #idle: Worker[] = [];
  readonly #all = new Set<Worker>();
  /** Callers with greps waiting, in the order they are served next (a Map keeps insertion order). */
  readonly #waiting = new Map<string, Job[]>();
  readonly #runningCallers = new Set<string>();

  /**
   * @param places when given, a caller's greps are also counted over every instance (one running
   *   and `maxWaitingPerUser` waiting in all), so several instances do not multiply their line.
   */
  constructor(
    readonly limits: RegexRunnerLimits,
    private readonly places?: SharedPlaces,
  ) {}

  /** Runs a grep in `caller`'s line (a key such as `user:12`, see `grepQueueOf`). */
  async run(caller: string, options: GrepOptions, texts: string[]): Promise<GrepResult> {
    const full = () => new RegexQueueFullError(`${this.#waiting.get(caller)?.length ?? 0} regex greps of yours are waiting already`);
    if ((this.#waiting.get(caller)?.length ?? 0) >= this.limits.maxWaitingPerUser) throw full();
    const release = this.places ? await this.places(caller, this.limits.maxWaitingPerUser + 1) : () => {};
    if (!release) throw full();
    try {
      return await new Promise<GrepResult>((resolve, reject) => {
        // Looked up again: other greps of this caller may have come and gone while the place was taken.
        const queue = this.#waiting.get(caller) ?? [];
        queue.push({ options, texts, resolve, reject });
        this.#waiting.set(caller, queue);
        this.#dispatch();
      });
    } finally {
      release();
    }
  }

  /** Starts waiting greps while workers are free, one per caller, taking callers in turn. */
  #dispatch(): void {
    while (this.#runningCallers.size < this.limits.workers) {
      const caller = [...this.#waiting.keys()].find((key) => !this.#runningCallers.has(key));
      if (caller === undefined) return;
      const queue = this.#waiting.get(caller) as Job[];
      const job = queue.shift() as Job;
      this.#waiting.delete(caller);
      if (queue.length > 0) this.#waiting.set(caller, queue);
      this.#runningCallers.add(caller);
      this.#runNow(job.options, job.texts)
        .then(job.resolve, job.reject)
        .finally(() => {
          this.#runningCallers.delete(caller);
          this.#dispatch();
        });
    }
  }

  #spawn(): Worker {
    // From the sources, workers do not inherit tsx's loader through a .ts URL: the entry registers it.
    const worker = new Worker(RUNS_BUILT ? builtFile("regex-worker.js") : new URL("./regex-worker-entry.mjs", import.meta.url));
    worker.unref();
    this.#all.add(worker);
    return worker;
  }

  #discard(worker: Worker): void {
    this.#all.delete(worker);
    void worker.terminate();
  }

  #runNow(options: GrepOptions, texts: string[]): Promise<GrepResult> {
    const worker = this.#idle.pop() ?? this.#spawn();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        this.#discard(worker);
        reject(new RegexTimeoutError(`the pattern took longer than ${this.limits.timeoutMs} ms`));
      }, this.limits.timeoutMs);
      const onMessage = (result: GrepResult) => {
        cleanup();
        this.#idle.push(worker);
        resolve(result);
      };
      const onError = (error: Error) => {
        cleanup();
        this.#discard(worker);
        reject(error);
      };
      const cleanup = () => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
      };
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.postMessage({ options, texts });
    });
  }

  async close(): Promise<void> {
    const workers = [...this.#all];
    this.#all.clear();
    this.#idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
