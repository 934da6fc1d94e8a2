/**
 * The notes view's keyboard shortcuts: one table serves the key handler and the shortcuts sheet,
 * so the sheet cannot list a key that does nothing. "Mod" is ⌘ on macOS and Ctrl elsewhere.
 */
export type ShortcutAction = "newNote" | "quickSwitcher" | "focusSearch" | "toggleFolders" | "toggleList" | "shortcuts";

interface Shortcut {
  readonly action: ShortcutAction;
  /** `KeyboardEvent.key` values (lower case) that trigger it with Mod held. */
  readonly keys: readonly string[];
  readonly shift?: boolean;
  readonly label: string;
  readonly what: string;
}

export const SHORTCUTS: readonly Shortcut[] = [
  { action: "newNote", keys: ["n"], label: "Mod+N", what: "New note" },
  { action: "quickSwitcher", keys: ["p", "k"], label: "Mod+P or Mod+K", what: "Go to a note by its title" },
  { action: "focusSearch", keys: ["f"], shift: true, label: "Mod+Shift+F", what: "Search notes" },
  { action: "toggleFolders", keys: ["\\"], label: "Mod+\\", what: "Show or hide the folders" },
  { action: "toggleList", keys: ["\\"], shift: true, label: "Mod+Shift+\\", what: "Show or hide the note list" },
  { action: "shortcuts", keys: ["/"], label: "Mod+/", what: "This list of shortcuts" },
];

/** Keys handled where the focus is, listed on the sheet beside the global ones. */
export const IN_PLACE_KEYS: readonly { readonly label: string; readonly what: string }[] = [
  { label: "Enter (in the title)", what: "Go to the note's text" },
  { label: "↑ ↓ Home End (in the note list)", what: "Move through the notes" },
  { label: "Escape", what: "Close the open panel, dialog or search" },
  { label: "Mod+Z, Mod+Shift+Z", what: "Undo, redo in the note's text" },
];

export const IS_MAC = /Mac|iPhone|iPad/.test(navigator.platform);

/** A shortcut's label for this system: "Ctrl+N", or "⌘N" on macOS. */
export function keyLabel(label: string): string {
  return IS_MAC ? label.replaceAll("Mod+", "⌘").replaceAll("Shift+", "⇧") : label.replaceAll("Mod", "Ctrl");
}

/** The action a key press asks for, if any. */
export function shortcutFor(event: KeyboardEvent): ShortcutAction | null {
  const mod = IS_MAC ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey;
  if (!mod || event.altKey) return null;
  const key = event.key.toLowerCase();
  // Shift+/ types "?" on most layouts; Shift+\ types "|".
  const found = SHORTCUTS.find(
    (shortcut) =>
      Boolean(shortcut.shift) === event.shiftKey &&
      (shortcut.keys.includes(key) || (key === "|" && shortcut.keys.includes("\\") && event.shiftKey)),
  );
  return found?.action ?? null;
}
