import type { Response } from "express";

/**
 * The chat stream: one JSON object per line in a plain-text body, as existing clients read it.
 * When nothing has been written for `progressMs` (a long tool or a slow model), a progress line
 * goes out, because clients give up after about 75 s of silence.
 */
export class ChatStream {
  #lastWrite = Date.now();
  readonly #started = Date.now();
  readonly #timer: NodeJS.Timeout;
  #stage = "thinking";

  constructor(
    private readonly res: Response,
    progressMs: number,
  ) {
    res.status(200);
    res.set({
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
      // Proxies such as nginx would otherwise hold the lines back.
      "X-Accel-Buffering": "no",
    });
    res.flushHeaders();
    this.#timer = setInterval(
      () => {
        if (Date.now() - this.#lastWrite >= progressMs) {
          this.write({ type: "pipeline-progress", stage: this.#stage, elapsedMs: Date.now() - this.#started });
        }
      },
      Math.max(50, Math.floor(progressMs / 3)),
    );
    this.#timer.unref();
  }

  /** What the progress lines say the run is doing. */
  set stage(stage: string) {
    this.#stage = stage;
  }

  write(line: Record<string, unknown>): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.#lastWrite = Date.now();
    this.res.write(`${JSON.stringify(line)}\n`);
  }

  end(): void {
    clearInterval(this.#timer);
    if (!this.res.writableEnded) this.res.end();
  }
}
