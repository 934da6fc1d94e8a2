const INPUT_EVENTS = ["pointerdown", "keydown", "wheel"] as const;

/**
 * Resolves once the owner has left the page alone for `quietMs` (no click, key or scroll), at the
 * latest after `maxMs`, and never before the next frame has painted; at once when `signal` aborts.
 * For work that can wait (a few hundred ms of the page's thread after a start): done now it would
 * hold up the first thing the owner does.
 */
export function ownerPause(quietMs: number, maxMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      clearTimeout(quiet);
      clearTimeout(latest);
      for (const type of INPUT_EVENTS) window.removeEventListener(type, onInput, { capture: true });
      signal.removeEventListener("abort", done);
      resolve();
    };
    const onInput = () => {
      clearTimeout(quiet);
      quiet = setTimeout(done, quietMs);
    };
    const latest = setTimeout(done, maxMs);
    for (const type of INPUT_EVENTS) window.addEventListener(type, onInput, { capture: true, passive: true });
    signal.addEventListener("abort", done);
    // Counted from the first paint: what was just rendered shows before the waiting work starts.
    requestAnimationFrame(() => setTimeout(() => quiet === undefined && !signal.aborted && onInput(), 0));
  });
}
