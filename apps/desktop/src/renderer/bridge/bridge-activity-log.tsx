import type { BridgeActivityItem, BridgeTaskOutcome, DesktopApi } from "../../shared/desktop-api";
import { personLabel } from "../../shared/person-label";
import { clockTime } from "../approvals/time-left";
import { usePolled } from "../components/use-polled";

/** Tasks change as the runtime works; every two seconds is prompt enough for a log. */
const POLL_MS = 2000;

const OUTCOMES: Readonly<Record<BridgeTaskOutcome, string>> = {
  waiting: "Waiting to run",
  running: "Running",
  answered: "Answered",
  reply_received: "A reply to your request",
  rejected: "Not run: refused",
  runtime_error: "Failed (runtime_error)",
  interrupted: "Interrupted",
  not_delivered: "Not delivered",
};

const TOOL_STATUS: Readonly<Record<BridgeActivityItem["toolCalls"][number]["status"], string>> = {
  auto_allow: "allowed by your rule",
  pending: "waiting for you",
  allowed: "allowed",
  denied: "denied",
  expired: "expired (denied)",
};

/**
 * What the bridge did lately: each task received, from whom, how it ended (and why, when it went
 * wrong), and the tool calls decided while it ran. The request text is the peer's and is shown as
 * text.
 */
export function BridgeActivityLog({ api }: { api: DesktopApi }) {
  const activity = usePolled(() => api.listBridgeActivity(), POLL_MS);
  return (
    <section aria-labelledby="bridge-activity-heading">
      <h3 id="bridge-activity-heading">Activity</h3>
      {activity.error && <p className="approvals-load-error">Could not refresh: {activity.error}</p>}
      {activity.data === undefined && !activity.error && <p className="empty-state">Loading…</p>}
      {activity.data?.length === 0 && (
        <p className="empty-state">No tasks yet. Tasks other people's agents send you, and guests answered here, appear here.</p>
      )}
      {activity.data && activity.data.length > 0 && (
        <ol className="bridge-activity" aria-label="Tasks received">
          {activity.data.map((task) => (
            <li key={task.messageId} className="bridge-task" data-outcome={task.outcome}>
              <p className="bridge-task-head">
                <span>
                  <time dateTime={task.receivedAt}>{clockTime(task.receivedAt)}</time> · <From task={task} />
                </span>
                <span className="bridge-task-outcome">{OUTCOMES[task.outcome]}</span>
              </p>
              <p className="bridge-task-request" dir="auto">
                {task.request}
              </p>
              {task.detail && <p className="bridge-task-detail">{task.detail}</p>}
              {task.toolCalls.length > 0 && (
                <ul className="bridge-task-tools" aria-label="Tool calls">
                  {task.toolCalls.map((call, index) => (
                    <li key={index} data-status={call.status}>
                      <code>{call.toolName}</code> {TOOL_STATUS[call.status]}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** Who asked: a person (by name, as the server vouches for the principal), or a guest on one of the owner's links. */
function From({ task }: { task: BridgeActivityItem }) {
  if (task.source === "guest") {
    return (
      <>
        guest <strong dir="auto">{task.fromName?.trim() || "without a name"}</strong> on link{" "}
        <strong dir="auto">{task.linkLabel?.trim() || "without a label"}</strong>
      </>
    );
  }
  return (
    <>
      from <strong dir="auto">{personLabel(task.fromName, task.fromPrincipalId ?? "")}</strong>
    </>
  );
}
