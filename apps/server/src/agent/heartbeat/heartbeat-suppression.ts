import { todayIn } from "@tandem/core/dates";

/**
 * A heartbeat that would say nearly what it already said is kept back: the owner gets a message
 * when something changed, not the same one every hour.
 */

/** Word-set similarity above which a message counts as a repeat. */
export const REPEAT_SIMILARITY = 0.85;
/** How far back delivered messages are compared. */
export const REPEAT_WINDOW_MS = 24 * 60 * 60_000;

function wordSet(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** Jaccard similarity of two texts' sets of words: shared words over all words (two empty texts are the same). */
export function jaccard(a: string, b: string): number {
  const left = wordSet(a);
  const right = wordSet(b);
  if (left.size === 0 && right.size === 0) return 1;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / (left.size + right.size - shared);
}

/**
 * Why `text` should not be delivered (it nearly repeats one of `delivered`), or null. Said in
 * words for the owner, with the earlier message's time as their heartbeat's clock shows it:
 * "the same as the 4:28 PM message", "nearly the same as yesterday's 9:00 AM message". (The
 * desktop shows it after "Not sent: ".)
 */
export function repeatReason(
  text: string,
  delivered: readonly { text: string; completed_at: string | null }[],
  timeZone: string,
  now: Date,
): string | null {
  let best: { similarity: number; at: string | null } | undefined;
  for (const earlier of delivered) {
    const similarity = jaccard(text, earlier.text);
    if (!best || similarity > best.similarity) best = { similarity, at: earlier.completed_at };
  }
  if (!best || best.similarity <= REPEAT_SIMILARITY) return null;
  const same = best.similarity === 1 ? "the same as" : "nearly the same as";
  return best.at ? `${same} ${messageWhen(best.at, timeZone, now)} message` : `${same} an earlier message`;
}

/** "the 4:28 PM", "yesterday's 4:28 PM": when an earlier message of the last day went out, in `timeZone`. */
function messageWhen(iso: string, timeZone: string, now: Date): string {
  const at = new Date(iso);
  const time = new Intl.DateTimeFormat("en-US", { timeZone, hour: "numeric", minute: "2-digit" }).format(at);
  return todayIn(timeZone, at) === todayIn(timeZone, now) ? `the ${time}` : `yesterday's ${time}`;
}
