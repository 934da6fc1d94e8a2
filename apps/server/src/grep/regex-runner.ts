import { Worker } from "node:worker_threads";
import type { GrepOptions, LineMatch } from "./line-matcher";

export class RegexTimeoutError extends Error {}

/**
 * Runs regex grep in a worker thread with a deadline. JavaScript regexes can backtrack for
 * longer than the universe exists and cannot be interrupted in-process; a worker can be
 * terminated. The worker is reused between requests and replaced after a timeout.
 */
export class RegexRunner {
  #worker: Worker | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly timeoutMs: number) {}

  #spawn(): Worker {
    // Workers do not inherit tsx's loader through a .ts URL; register it inside the worker.
    const worker = new Worker(new URL("./regex-worker-entry.mjs", import.meta.url));
    worker.unref();
    return worker;
  }

  /** One request at a time: requests queue so a slow one cannot be blamed on the next. */
  run(options: GrepOptions, texts: string[]): Promise<LineMatch[][]> {
    const result = this.#queue.then(() => this.#runNow(options, texts));
    this.#queue = result.catch(() => {});
    return result;
  }

  #runNow(options: GrepOptions, texts: string[]): Promise<LineMatch[][]> {
    this.#worker ??= this.#spawn();
    const worker = this.#worker;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        this.#worker = undefined;
        void worker.terminate();
        reject(new RegexTimeoutError(`the pattern took longer than ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const onMessage = (results: LineMatch[][]) => {
        cleanup();
        resolve(results);
      };
      const onError = (error: Error) => {
        cleanup();
        this.#worker = undefined;
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
    await this.#worker?.terminate();
    this.#worker = undefined;
  }
}
