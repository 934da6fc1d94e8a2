/**
 * One piece of work several requests wait on (one model call for the same note versions). It is
 * aborted once every request that joined it has gone, and not before: a caller that leaves stops
 * only its own wait while others still want the answer.
 */
export class SharedCall<T> {
  readonly #controller = new AbortController();
  readonly #result: Promise<T>;
  #waiting = 0;

  /** Starts `work` at once; its signal aborts when the last caller still waiting leaves. */
  constructor(work: (signal: AbortSignal) => Promise<T>) {
    this.#result = work(this.#controller.signal);
  }

  /** The work's result for one caller; rejects with the caller's abort reason as soon as it leaves. */
  join(signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) {
      // Gone before it joined: if no one else waits (it started the work itself), the work stops too.
      if (this.#waiting === 0) this.#controller.abort(signal.reason);
      return Promise.reject(signal.reason);
    }
    this.#waiting += 1;
    if (!signal) return this.#result;
    return new Promise<T>((resolve, reject) => {
      const leave = () => {
        this.#waiting -= 1;
        if (this.#waiting === 0) this.#controller.abort(signal.reason);
        reject(signal.reason);
      };
      signal.addEventListener("abort", leave, { once: true });
      this.#result.then(resolve, reject).finally(() => signal.removeEventListener("abort", leave));
    });
  }
}
