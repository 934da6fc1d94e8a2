import { useEffect, useState } from "react";
import type { DesktopApi, InboxRequest, InboxRequestAction } from "../../shared/desktop-api";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { useHostStatus } from "../layout/host-status";
import { shortTime } from "../notes/note-time";
import { useInboxSession } from "./inbox-session";

/** Requests are read again with the list and on each `message_request` the host sees; this catches the rest. */
const REQUESTS_POLL_MS = 20_000;

/**
 * Message requests: people the owner is not connected with wrote to them. Their words are shown
 * as text and nothing else happens with them (no agent reads them) until the owner accepts (which
 * connects the two and moves the messages into the inbox), ignores or blocks. `reloadKey` changes
 * when the list around it is read again; the host's count of `message_request` events brings new ones at once.
 */
export function MessageRequests({ api, reloadKey, onAccepted }: { api: DesktopApi; reloadKey: unknown; onAccepted: () => void }) {
  const session = useInboxSession();
  const requests = usePolled(() => api.listInboxRequests(), REQUESTS_POLL_MS);
  const { refresh } = requests;
  // Whatever the answer (done, or refused because it was answered elsewhere), the list is read again.
  const action = useAction(refresh);
  const [done, setDone] = useState<string | null>(null);
  // The host counts the channel's `message_request` events: a new one is a request to read.
  const seen = useHostStatus().status?.inboxRequestsSeen;
  useEffect(() => {
    refresh();
  }, [reloadKey, seen, refresh]);

  const answer = (request: InboxRequest, kind: InboxRequestAction) =>
    void action.run(`${kind}:${request.requestId}`, async () => {
      setDone(null);
      const answered = await api.answerInboxRequest({ requestId: request.requestId, action: kind });
      setDone(answered.message);
      if (kind === "accept") {
        onAccepted();
        session.open({ kind: "conversation", conversationId: answered.conversationId });
      }
    });

  const list = requests.data?.supported ? requests.data.requests : [];
  if (list.length === 0 && done === null && action.error === null && requests.error === null) return null;
  return (
    <section className="inbox-requests" aria-label="Requests">
      <h3>
        Requests{" "}
        {list.length > 0 && (
          <span className="badge" data-kind="count">
            {list.length}
          </span>
        )}
      </h3>
      {list.length > 0 && (
        <p className="hint">People you are not connected with. What they wrote stays here, unread by your agent, until you answer.</p>
      )}
      {done && (
        <p className="hint" role="status">
          {done}
        </p>
      )}
      {action.error && <ErrorNotice message={`Not done: ${action.error}`} />}
      {requests.error && <ErrorNotice message={`The requests could not be loaded: ${requests.error}`} onRetry={refresh} />}
      <ul className="inbox-request-list">
        {list.map((request) => (
          <RequestItem key={request.requestId} request={request} running={action.running} onAnswer={(kind) => answer(request, kind)} />
        ))}
      </ul>
    </section>
  );
}

function RequestItem({
  request,
  running,
  onAnswer,
}: {
  request: InboxRequest;
  /** The answer under way (`<action>:<requestId>`), if any: one at a time. */
  running: string | null;
  onAnswer: (kind: InboxRequestAction) => void;
}) {
  const name = request.from.name || request.from.username;
  const busy = (kind: InboxRequestAction) => running === `${kind}:${request.requestId}`;
  const more = request.messageCount - request.messages.length;
  return (
    <li className="inbox-request" aria-label={`Request from ${name}`}>
      <div className="inbox-row-head">
        <span className="inbox-row-title" dir="auto">
          {name} <span className="hint">@{request.from.username}</span>
        </span>
        <span className="inbox-row-time">{shortTime(request.updatedAt)}</span>
      </div>
      {more > 0 && <p className="hint">and {more} earlier</p>}
      <ul className="inbox-request-messages" aria-label="Their messages">
        {request.messages.map((message) => (
          <li key={message.id} dir="auto">
            {message.content}
          </li>
        ))}
      </ul>
      <div className="inbox-request-actions">
        <button type="button" className="primary" disabled={running !== null} onClick={() => onAnswer("accept")}>
          {busy("accept") ? "Accepting…" : "Accept"}
        </button>
        <button type="button" disabled={running !== null} onClick={() => onAnswer("ignore")}>
          {busy("ignore") ? "Ignoring…" : "Ignore"}
        </button>
        <ConfirmButton
          label="Block"
          question={`Block ${name}? You will not see anything more they send you, and they are not told.`}
          disabled={running !== null}
          onConfirm={() => onAnswer("block")}
        />
      </div>
    </li>
  );
}
