import { useId } from "react";
import { HEARTBEAT_CHECKLIST_MAX } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { fullTime } from "../notes/note-time";
import { useHeartbeatSession } from "./heartbeat-session";
import { SaveStatus } from "./heartbeat-settings";

const count = new Intl.NumberFormat("en-US");

/**
 * The checklist the heartbeat follows: the note Memory/Self/HEARTBEAT.md, as Markdown. What is
 * typed stays (across sections too) until it is saved or undone; past the server's limit it says
 * so and cannot be saved, and a refusal keeps the text with the reason.
 */
export function ChecklistEditor() {
  const heartbeat = useHeartbeatSession();
  const { checklist } = heartbeat;
  const id = useId();
  const counterId = useId();
  const length = heartbeat.checklistText.length;
  const over = length > HEARTBEAT_CHECKLIST_MAX;
  const saving = heartbeat.checklistSave.status === "saving";
  const empty = heartbeat.checklistText.trim() === "";
  const loaded = checklist.status === "ready";

  return (
    <section className="checklist-editor" aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`}>Checklist</h3>
      <p className="hint">
        What the heartbeat looks at each time, in your words (Markdown). It is the note <code>Memory/Self/HEARTBEAT.md</code>.
        {loaded && checklist.value.isDefault && " This is the default checklist; change it as you like."}
        {loaded && checklist.value.updatedAt && ` Saved ${fullTime(checklist.value.updatedAt)}.`}
      </p>
      {checklist.status === "loading" && heartbeat.checklistText === "" && <p className="empty-state">Loading the checklist…</p>}
      {checklist.status === "failed" && !heartbeat.offline && (
        <ErrorNotice message={`The checklist could not be loaded: ${checklist.message}`} onRetry={heartbeat.reload} />
      )}
      <textarea
        aria-labelledby={`${id}-heading`}
        className="checklist-text"
        aria-describedby={counterId}
        aria-invalid={over || undefined}
        spellCheck
        value={heartbeat.checklistText}
        // Until the server's text is here, typing would be lost when it comes.
        readOnly={!loaded && heartbeat.checklistText === ""}
        onChange={(event) => heartbeat.setChecklistText(event.target.value)}
      />
      <div className="heartbeat-save-row">
        <button
          type="button"
          className="primary"
          disabled={!heartbeat.checklistDirty || over || empty || saving || heartbeat.offline}
          onClick={heartbeat.saveChecklist}
        >
          Save checklist
        </button>
        {heartbeat.checklistDirty && !saving && (
          <button type="button" onClick={heartbeat.revertChecklist}>
            Undo changes
          </button>
        )}
        <SaveStatus state={heartbeat.checklistSave} dirty={heartbeat.checklistDirty} />
        <span id={counterId} className="char-count" data-over={over || undefined}>
          {count.format(length)} / {count.format(HEARTBEAT_CHECKLIST_MAX)} characters
          {over && ` (${count.format(length - HEARTBEAT_CHECKLIST_MAX)} too many)`}
        </span>
      </div>
      {empty && heartbeat.checklistDirty && (
        <p className="hint">An empty checklist cannot be saved: the heartbeat needs something to look at.</p>
      )}
      {heartbeat.checklistSave.status === "failed" && (
        <ErrorNotice message={`The checklist was not saved: ${heartbeat.checklistSave.error}`} />
      )}
    </section>
  );
}
