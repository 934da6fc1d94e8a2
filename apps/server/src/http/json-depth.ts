/** How deep arrays and objects may nest in a JSON body; far beyond any real request. */
export const MAX_JSON_DEPTH = 100;

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether the JSON text in `bytes` nests arrays and objects deeper than `maxDepth`. Scans bytes,
 * not characters: in UTF-8 no byte of a multi-byte character is an ASCII bracket or quote. Run
 * before parsing, because a value nested thousands deep parses fine and then overflows the stack
 * of whatever walks it recursively (`JSON.stringify`, schema checks).
 */
export function jsonNestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
  }
  return false;
}
