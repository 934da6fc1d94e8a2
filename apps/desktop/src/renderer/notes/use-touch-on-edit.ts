import { useEffect, useRef } from "react";
import type * as Y from "yjs";

/** Long enough that typing is one touch, short enough that the list order follows soon after. */
const TOUCH_DELAY_MS = 1000;

/**
 * Calls `touch` (which sets the note's `updatedAt` in the workspace document) a moment after the
 * owner edits the body here. Changes that arrive from the hub are not ours to date: whoever made
 * them set `updatedAt` already.
 */
export function useTouchOnEdit(noteDoc: Y.Doc, touch: () => void): void {
  const touchRef = useRef(touch);
  useEffect(() => {
    touchRef.current = touch;
  });
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onUpdate = (_update: Uint8Array, _origin: unknown, _doc: Y.Doc, transaction: Y.Transaction) => {
      if (!transaction.local) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        timer = undefined;
        touchRef.current();
      }, TOUCH_DELAY_MS);
    };
    noteDoc.on("update", onUpdate);
    return () => {
      noteDoc.off("update", onUpdate);
      // Leaving the note before the delay: the edit still counts.
      if (timer !== undefined) {
        clearTimeout(timer);
        touchRef.current();
      }
    };
  }, [noteDoc]);
}
