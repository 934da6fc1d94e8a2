/**
 * Removes reasoning blocks (`<think>…</think>`, `<thinking>…</thinking>`) that some open models
 * write into their answer text, as it streams: a tag may arrive split across deltas, so text that
 * could still be the start of a tag is held back until the next delta decides.
 */
export class ThinkFilter {
  #held = "";
  #inside = false;

  push(delta: string): string {
    let text = this.#held + delta;
    this.#held = "";
    let out = "";
    while (text.length > 0) {
      if (this.#inside) {
        const close = /<\/think(?:ing)?>/i.exec(text);
        if (!close) {
          this.#held = partialTagSuffix(text, ["</think>", "</thinking>"]);
          return out;
        }
        text = text.slice(close.index + close[0].length);
        this.#inside = false;
      } else {
        const open = /<think(?:ing)?>/i.exec(text);
        if (!open) {
          const held = partialTagSuffix(text, ["<think>", "<thinking>"]);
          this.#held = held;
          return out + text.slice(0, text.length - held.length);
        }
        out += text.slice(0, open.index);
        text = text.slice(open.index + open[0].length);
        this.#inside = true;
      }
    }
    return out;
  }

  /** What is left at the end of the stream: held text that never became a tag. */
  flush(): string {
    const rest = this.#inside ? "" : this.#held;
    this.#held = "";
    return rest;
  }
}

/** The longest end of `text` that is the beginning of one of the tags. */
function partialTagSuffix(text: string, tags: readonly string[]): string {
  const lower = text.toLowerCase();
  for (let length = Math.min(lower.length, 11); length > 0; length--) {
    const end = lower.slice(-length);
    if (tags.some((tag) => tag.startsWith(end))) return text.slice(-length);
  }
  return "";
}
