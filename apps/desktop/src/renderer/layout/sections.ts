/** The app's sections, in sidebar order. */
export const SECTIONS = [
  { id: "notes", title: "Notes" },
  { id: "todos", title: "Todos" },
  { id: "approvals", title: "Approvals" },
  { id: "bridge", title: "Bridge" },
] as const;

export type SectionId = (typeof SECTIONS)[number]["id"];

/** The section a URL hash names (`#approvals`), if any: Electron's main opens the window on one that way. */
export function sectionFromHash(hash: string): SectionId | null {
  const id = hash.replace(/^#/, "");
  return SECTIONS.find((section) => section.id === id)?.id ?? null;
}
