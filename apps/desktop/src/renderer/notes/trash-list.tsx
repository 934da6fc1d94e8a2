import { TRASH_RETENTION_DAYS } from "@tandem/core/documents";
import type * as Y from "yjs";
import { ConfirmButton } from "../components/confirm-button";
import { shortTime } from "./note-time";
import { deleteForever, restoreTrashed } from "./workspace-actions";
import type { TrashItem } from "./workspace-model";
import "./trash.css";

/** The Trash: notes and folders deleted on any device, to restore or delete for good. */
export function TrashList({ doc, items }: { doc: Y.Doc; items: readonly TrashItem[] }) {
  return (
    <>
      <div className="pane-header">
        <h3>Trash</h3>
      </div>
      <p className="trash-hint">Deleted notes and folders stay here for {TRASH_RETENTION_DAYS} days, on every device.</p>
      {items.length === 0 ? (
        <p className="empty-state">The Trash is empty.</p>
      ) : (
        <ul className="trash-list" aria-label="Trash">
          {items.map((item) => (
            <li key={item.uuid} className="trash-entry">
              <span className="note-item-title">
                <span className="trash-kind">{item.kind === "folder" ? "Folder" : "Note"}</span> {item.title}
              </span>
              <time className="note-item-time" dateTime={item.trashedAt}>
                {shortTime(item.trashedAt)}
              </time>
              <span className="trash-actions">
                <button type="button" aria-label={`Restore ${item.title}`} onClick={() => restoreTrashed(doc, item.uuid)}>
                  Restore
                </button>
                <ConfirmButton
                  label="Delete forever"
                  question={`Delete "${item.title}" for good? This cannot be undone.`}
                  onConfirm={() => deleteForever(doc, item.uuid)}
                />
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
