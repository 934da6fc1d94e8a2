// One tool result goes into the model's context whole: a single huge note or grep must not fill
// it. A result larger than the cap is shrunk, long strings first (the Markdown of a note, long
// lines and snippets), then lists from their end, and says so in `truncated` and `truncatedNotice`.

/** The most bytes of JSON one tool result may take. */
export const MAX_RESULT_BYTES = 20_000;

/** Strings are cut no shorter than this before lists lose items. */
const MIN_STRING_CHARS = 200;
export const CUT_MARK = "… [cut]";

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "");

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A copy of `value` with every string longer than `chars` cut to `chars` and marked. */
function cutStrings(value: unknown, chars: number): unknown {
  if (typeof value === "string") {
    if (value.length <= chars) return value;
    // Never leave half a surrogate pair at the cut.
    const end = /[\uD800-\uDBFF]/.test(value.charAt(chars - 1)) ? chars - 1 : chars;
    return `${value.slice(0, end)}${CUT_MARK}`;
  }
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, chars));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cutStrings(item, chars)]));
  return value;
}

/** A copy of `value` with every list cut to its first `items` entries. */
function cutLists(value: unknown, items: number): unknown {
  if (Array.isArray(value)) return value.slice(0, items).map((item) => cutLists(item, items));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, cutLists(item, items)]));
  return value;
}

function longest(value: unknown, measure: (value: unknown) => number): number {
  let max = measure(value);
  if (Array.isArray(value)) for (const item of value) max = Math.max(max, longest(item, measure));
  else if (isPlainObject(value)) for (const item of Object.values(value)) max = Math.max(max, longest(item, measure));
  return max;
}

/**
 * The largest `n` in `[low, high]` whose `shrink(n)` fits `budget` bytes (size grows with `n`),
 * with that shrunk value; undefined when not even `low` fits.
 */
function largestFitting(shrink: (n: number) => unknown, low: number, high: number, budget: number): unknown {
  let best: unknown;
  let found = false;
  while (low <= high) {
    const middle = Math.floor((low + high) / 2);
    const candidate = shrink(middle);
    if (jsonBytes(candidate) <= budget) {
      best = candidate;
      found = true;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found ? best : undefined;
}

/** `result` as it is when it fits `maxBytes` of JSON, else shrunk to fit and marked as cut. */
export function capResult(result: unknown, maxBytes = MAX_RESULT_BYTES): unknown {
  if (jsonBytes(result) <= maxBytes) return result;
  const notice = {
    truncated: true,
    truncatedNotice: `This result was cut to fit ${maxBytes} bytes: long texts end with "${CUT_MARK}" and lists may lack their last items. Ask for less (a narrower query, a smaller limit, one note) to see the rest.`,
  };
  const budget = maxBytes - jsonBytes(notice) - (isPlainObject(result) ? 0 : jsonBytes({ result: null }));
  const stringLength = (value: unknown) => (typeof value === "string" ? value.length : 0);
  const listLength = (value: unknown) => (Array.isArray(value) ? value.length : 0);
  const shrunk =
    largestFitting((chars) => cutStrings(result, chars), MIN_STRING_CHARS, longest(result, stringLength), budget) ??
    largestFitting((items) => cutLists(cutStrings(result, MIN_STRING_CHARS), items), 0, longest(result, listLength), budget) ??
    null;
  return isPlainObject(shrunk) ? { ...shrunk, ...notice } : { result: shrunk, ...notice };
}
