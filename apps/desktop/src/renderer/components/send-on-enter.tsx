import type { KeyboardEvent } from "react";

/**
 * One rule for every message box (the Agent's, the Inbox's replies and new messages): Enter sends,
 * Shift+Enter starts a new line. A key that ends an input method's composition never sends.
 */
export function isSendKey(event: KeyboardEvent<HTMLTextAreaElement>): boolean {
  return event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing;
}

/** The rule, said under each message box (`id` for the box's `aria-describedby`). */
export function SendHint({ id }: { id: string }) {
  return (
    <p id={id} className="hint send-hint">
      <kbd>Enter</kbd> sends · <kbd>Shift</kbd>+<kbd>Enter</kbd> new line
    </p>
  );
}
