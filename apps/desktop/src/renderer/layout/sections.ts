/** The app's sections, in sidebar order (Mod+1 opens the first, and so on). */
export const SECTIONS = [
  { id: "notes", title: "Notes" },
  { id: "todos", title: "Todos" },
  { id: "today", title: "Today" },
  { id: "agent", title: "Agent" },
  { id: "heartbeat", title: "Heartbeat" },
  { id: "approvals", title: "Approvals" },
  { id: "bridge", title: "Bridge" },
  { id: "connections", title: "Connections" },
  { id: "inbox", title: "Inbox" },
  { id: "share", title: "Share links" },
  { id: "raw-memory", title: "Raw memory" },
  { id: "usage", title: "Usage" },
  { id: "agents", title: "Agents" },
] as const;

/** Sections past the ninth have no digit of their own: they are opened from the sidebar or by their hash. */
const KEYED_SECTIONS = SECTIONS.slice(0, 9);

export type SectionId = (typeof SECTIONS)[number]["id"];

/** The section a URL hash names (`#approvals`), if any: Electron's main opens the window on one that way. */
export function sectionFromHash(hash: string): SectionId | null {
  const id = hash.replace(/^#/, "");
  return SECTIONS.find((section) => section.id === id)?.id ?? null;
}

/** The section shortcuts as the shortcuts sheet lists them. */
export const SECTION_SHORTCUT = {
  label: `Mod+1 … Mod+${KEYED_SECTIONS.length}`,
  what: `Open a section: ${KEYED_SECTIONS.map((section) => section.title).join(", ")}`,
} as const;

/**
 * The section a key press opens: Mod+1 to Mod+9 in sidebar order ("Mod" is ⌘ on macOS, Ctrl
 * elsewhere, as for the notes view's shortcuts).
 */
export function sectionForKey(
  event: Pick<KeyboardEvent, "key" | "metaKey" | "ctrlKey" | "altKey" | "shiftKey">,
  isMac: boolean,
): SectionId | null {
  const mod = isMac ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey;
  if (!mod || event.altKey || event.shiftKey || !/^[1-9]$/.test(event.key)) return null;
  return KEYED_SECTIONS[Number(event.key) - 1]?.id ?? null;
}
