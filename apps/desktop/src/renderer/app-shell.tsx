import { useState } from "react";
import type { DesktopApi } from "../shared/desktop-api";
import { AppInfoBadge } from "./app-info";

interface Section {
  readonly id: string;
  readonly title: string;
  readonly emptyState: string;
}

const SECTIONS: readonly [Section, ...Section[]] = [
  { id: "notes", title: "Notes", emptyState: "No notes yet." },
  { id: "todos", title: "Todos", emptyState: "No todos yet." },
  { id: "approvals", title: "Approvals", emptyState: "No tool calls are waiting for your decision." },
];

/** The frame every screen lives in: header, section sidebar, and the selected section's content. */
export function AppShell({ api }: { api: DesktopApi }) {
  const [current, setCurrent] = useState<Section>(SECTIONS[0]);
  return (
    <div className="app-shell">
      <header className="app-header">
        <h1>Tandem</h1>
        <AppInfoBadge api={api} />
      </header>
      <nav className="sidebar" aria-label="Sections">
        <ul>
          {SECTIONS.map((section) => (
            <li key={section.id}>
              <button type="button" aria-current={section === current ? "page" : undefined} onClick={() => setCurrent(section)}>
                {section.title}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <main className="main-area" aria-labelledby="section-title">
        <h2 id="section-title">{current.title}</h2>
        <p className="empty-state">{current.emptyState}</p>
      </main>
    </div>
  );
}
