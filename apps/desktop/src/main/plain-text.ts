/**
 * Untrusted text (tool names and summaries from a runtime serving someone else, peer names) made
 * safe for the OS's own surfaces: one line, bounded, no control characters, and without the
 * characters those surfaces interpret. Menus turn `&` into a mnemonic on Windows and Linux, and
 * several Linux notification daemons parse `<b>`-style markup in bodies while others do not
 * (so escaping would show `&lt;` on some), hence `<`, `>` and `&` become look-alikes.
 */
export function plainText(text: string, maxLength: number): string {
  const oneLine = text
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ")
    .replace(/&/g, "＆")
    .replace(/</g, "‹")
    .replace(/>/g, "›")
    .replace(/\s+/g, " ")
    .trim();
  const characters = Array.from(oneLine);
  return characters.length <= maxLength ? oneLine : `${characters.slice(0, Math.max(0, maxLength - 1)).join("")}…`;
}
