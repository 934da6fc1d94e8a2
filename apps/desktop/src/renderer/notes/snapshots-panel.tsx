import { type FormEvent, useCallback, useEffect, useId, useRef, useState } from "react";
import type { DesktopApi, SnapshotPreview, SnapshotSummary } from "../../shared/desktop-api";
import { ConfirmButton } from "../components/confirm-button";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { useAction } from "../components/use-action";
import { useHostStatus } from "../layout/host-status";
import { fullTime } from "./note-time";
import { SnapshotPreviewFrame } from "./snapshot-preview-frame";

type Loaded<T> =
  | { readonly status: "loading" }
  | { readonly status: "ready"; readonly value: T }
  | { readonly status: "failed"; readonly message: string };

/** "Snapshot 3", or "Snapshot 3 · Before the rewrite": every snapshot shows its number. */
function snapshotName(snapshot: SnapshotSummary): string {
  return snapshot.label ? `Snapshot ${snapshot.seq} · ${snapshot.label}` : `Snapshot ${snapshot.seq}`;
}

const OFFLINE_NOTE = "Offline: snapshots are kept on the server. You can keep writing; snapshots come back when the server does.";

/**
 * The open note's versions on the server: save one with a label, preview one, restore one. They
 * live on the server, so the panel says so when it cannot be reached.
 */
export function SnapshotsPanel({
  api,
  noteUuid,
  width,
  onClose,
}: {
  api: DesktopApi;
  noteUuid: string;
  width: number;
  onClose: () => void;
}) {
  const offline = useHostStatus().status?.sync.state === "offline";
  const [list, setList] = useState<Loaded<SnapshotSummary[]>>({ status: "loading" });
  const [selected, setSelected] = useState<number | null>(null);
  const [preview, setPreview] = useState<Loaded<SnapshotPreview> | null>(null);
  const [label, setLabel] = useState("");
  const headingId = useId();

  const load = useCallback(async () => {
    try {
      setList({ status: "ready", value: await api.listSnapshots({ noteUuid }) });
    } catch (error) {
      setList({ status: "failed", message: errorMessage(error) });
    }
  }, [api, noteUuid]);

  useEffect(() => {
    setList({ status: "loading" });
    setSelected(null);
    setPreview(null);
    void load();
  }, [load]);

  // Back online: what failed offline is worth asking again.
  const wasOffline = useRef(offline);
  useEffect(() => {
    if (wasOffline.current && !offline) void load();
    wasOffline.current = offline;
  }, [offline, load]);

  useEffect(() => {
    if (selected === null) return;
    let current = true;
    setPreview({ status: "loading" });
    api.getSnapshot({ noteUuid, seq: selected }).then(
      (value) => current && setPreview({ status: "ready", value }),
      (error: unknown) => current && setPreview({ status: "failed", message: errorMessage(error) }),
    );
    return () => {
      current = false;
    };
  }, [api, noteUuid, selected]);

  // One action at a time; the list reloads after each, since the server adds snapshots itself.
  const action = useAction(() => void load());
  // Nothing here works without the server: offline, the controls say so by being disabled.
  const busy = action.running !== null || offline;

  const save = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = label.trim();
    void action.run("save", async () => {
      await api.createSnapshot({ noteUuid, ...(trimmed ? { label: trimmed } : {}) });
      setLabel("");
    });
  };

  const restore = (seq: number) =>
    void action.run("restore", async () => {
      await api.restoreSnapshot({ noteUuid, seq });
      setSelected(null);
    });

  return (
    <aside id="snapshots-panel" className="snapshots-panel" aria-labelledby={headingId} style={{ width }}>
      <div className="pane-header">
        <h3 id={headingId}>Snapshots</h3>
        <button type="button" className="icon-button" aria-label="Close snapshots" onClick={onClose}>
          ×
        </button>
      </div>
      <form className="snapshot-save" onSubmit={save}>
        <input
          aria-label="Snapshot label"
          placeholder="Label"
          maxLength={200}
          dir="auto"
          disabled={offline}
          value={label}
          onChange={(event) => setLabel(event.target.value)}
        />
        <button type="submit" disabled={busy}>
          Save snapshot
        </button>
      </form>
      {offline && (
        <p className="panel-notice" role="status">
          {OFFLINE_NOTE}
        </p>
      )}
      {action.error && <ErrorNotice message={action.error} />}
      {list.status === "loading" && <p className="empty-state">Loading…</p>}
      {list.status === "failed" && !offline && <ErrorNotice message={list.message} onRetry={() => void load()} />}
      {list.status === "ready" &&
        (list.value.length === 0 ? (
          <p className="empty-state">No snapshots yet.</p>
        ) : (
          <ul className="snapshot-list" aria-label="Snapshot list">
            {list.value.map((snapshot) => (
              <li key={snapshot.seq}>
                <button
                  type="button"
                  className="snapshot-item"
                  aria-current={snapshot.seq === selected ? "true" : undefined}
                  onClick={() => setSelected(snapshot.seq === selected ? null : snapshot.seq)}
                >
                  <span className="snapshot-name" dir="auto">
                    {snapshotName(snapshot)}
                  </span>
                  <span className="snapshot-meta">
                    {fullTime(snapshot.createdAt)} · {snapshot.wordCount} {snapshot.wordCount === 1 ? "word" : "words"}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        ))}
      {preview && selected !== null && (
        <section className="snapshot-preview" aria-label="Preview">
          {preview.status === "loading" && <p className="empty-state">Loading…</p>}
          {preview.status === "failed" && <ErrorNotice message={preview.message} />}
          {preview.status === "ready" && (
            <>
              <SnapshotPreviewFrame html={preview.value.html} />
              <ConfirmButton
                label="Restore"
                question={`Replace the note with ${snapshotName(preview.value)}? The current text is saved as a new snapshot first.`}
                disabled={busy}
                onConfirm={() => restore(preview.value.seq)}
              />
            </>
          )}
        </section>
      )}
    </aside>
  );
}
