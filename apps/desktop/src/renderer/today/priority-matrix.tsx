import type { MatrixItem, PriorityMatrix } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import type { Loaded } from "./briefing-session";

/** The four quadrants, in reading order: do, schedule, keep short, drop. */
const QUADRANTS: readonly { readonly key: keyof PriorityMatrix; readonly title: string; readonly hint: string }[] = [
  { key: "q1_urgent_important", title: "Urgent and important", hint: "Do now" },
  { key: "q2_not_urgent_important", title: "Important, not urgent", hint: "Plan a time" },
  { key: "q3_urgent_not_important", title: "Urgent, not important", hint: "Keep it short" },
  { key: "q4_not_urgent_not_important", title: "Neither", hint: "Later, or drop it" },
];

const SOURCES: Record<string, string> = { todo: "Todo", calendar: "Calendar", email: "Email", note: "Note", status: "Status" };

/** The briefing's items placed by urgency and importance. */
export function PriorityMatrixView({ matrix, onRetry }: { matrix: Loaded<PriorityMatrix>; onRetry: () => void }) {
  return (
    <section className="priority-matrix" aria-label="Priorities">
      <h3>Priorities</h3>
      {(matrix.status === "idle" || matrix.status === "loading") && <p className="empty-state">Sorting by urgency and importance…</p>}
      {matrix.status === "failed" && <ErrorNotice message={matrix.message} onRetry={onRetry} />}
      {matrix.status === "ready" && (
        <div className="quadrants">
          {QUADRANTS.map((quadrant) => (
            <Quadrant key={quadrant.key} title={quadrant.title} hint={quadrant.hint} items={matrix.value[quadrant.key]} />
          ))}
        </div>
      )}
    </section>
  );
}

function Quadrant({ title, hint, items }: { title: string; hint: string; items: readonly MatrixItem[] }) {
  return (
    <section className="quadrant" aria-label={title}>
      <h4>
        {title} <span className="quadrant-hint">{hint}</span>
      </h4>
      {items.length === 0 ? (
        <p className="empty-state">Nothing.</p>
      ) : (
        <ul>
          {items.map((item, index) => (
            <li key={index}>
              <span dir="auto">{item.title}</span> <span className="matrix-source">{SOURCES[item.source] ?? item.source}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
