/**
 * Incremental parser for a `text/event-stream` body (the WHATWG rules the bridge needs): frames end
 * at a blank line; `data:` lines are joined; comments (`: ping`) and `event:`/`id:` lines are
 * ignored, because the realtime wire puts everything in the `data:` JSON.
 */
export class SseParser {
  #buffer = "";
  #data: string[] = [];

  /** Feeds a decoded chunk; answers the `data` of every frame it completed, in order. */
  push(chunk: string): string[] {
    this.#buffer += chunk;
    const frames: string[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.#buffer);
      if (!match) break;
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (match[0] === "\r" && match.index === this.#buffer.length - 1) break;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      if (line === "") {
        if (this.#data.length > 0) frames.push(this.#data.join("\n"));
        this.#data = [];
      } else if (line.startsWith("data:")) {
        const value = line.slice(5);
        this.#data.push(value.startsWith(" ") ? value.slice(1) : value);
      }
    }
    return frames;
  }
}
