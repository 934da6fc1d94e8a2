import { useEffect } from "react";
import type { DesktopApi, InboxConversation, InboxView as View } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { usePolled } from "../components/use-polled";
import { useHostStatus } from "../layout/host-status";
import { shortTime } from "../notes/note-time";
import { ConversationPane } from "./conversation-pane";
import { useInboxSession } from "./inbox-session";
import { MessageRequests } from "./message-requests";
import { NewGroupForm, NewMessageForm } from "./new-message-form";
// Panels and the offline notice look as in the Connections section.
import "../connections/connections.css";
import "./inbox.css";

/** The list is read again on each arrival (through the host's status); this is for changes made elsewhere. */
const LIST_POLL_MS = 20_000;

const VIEWS: readonly { id: View; label: string }[] = [
  { id: "all", label: "All" },
  { id: "coo", label: "People" },
  { id: "group", label: "Groups" },
];

/**
 * The Inbox section: conversations with people and groups (the server's `coo` and `group` views),
 * unread counts, one conversation open with its reply box, and new messages and groups. Messages
 * are kept on the server: offline, the list stays as it was and sending says why it failed.
 */
export function InboxView({ api }: { api: DesktopApi }) {
  const session = useInboxSession();
  const { status } = useHostStatus();
  const offline = status?.sync.state === "offline";
  const list = usePolled(() => api.listInbox({ view: session.view }), LIST_POLL_MS);
  const { refresh } = list;
  // A message arrived, or something was read: the list (and its unread counts) is worth asking for again.
  const arrival = status?.inboxArrival?.messageId;
  const unread = status?.inboxUnread;
  useEffect(() => {
    refresh();
  }, [arrival, unread, session.view, refresh]);

  if (list.data && !list.data.supported) {
    return (
      <div className="inbox-view">
        <p className="empty-state">This server doesn't support messaging people yet.</p>
      </div>
    );
  }
  const conversations = list.data?.conversations;
  const pane = session.pane;
  return (
    <div className="inbox-view">
      <aside className="connections-panel inbox-list" aria-label="Conversations">
        <div className="inbox-toolbar">
          <fieldset className="inbox-views" aria-label="Show">
            {VIEWS.map((view) => (
              <button key={view.id} type="button" aria-pressed={session.view === view.id} onClick={() => session.setView(view.id)}>
                {view.label}
              </button>
            ))}
          </fieldset>
          <div className="inbox-new">
            <button type="button" className="primary" onClick={() => session.open({ kind: "new-message" })}>
              New message
            </button>
            <button type="button" onClick={() => session.open({ kind: "new-group" })}>
              New group
            </button>
          </div>
        </div>
        {offline && (
          <p className="connections-offline inbox-offline" role="status">
            Messages are kept on the server, which can't be reached right now. What you see is how things stood.
          </p>
        )}
        {list.error && !offline && <ErrorNotice message={`The conversations could not be loaded: ${list.error}`} onRetry={refresh} />}
        <MessageRequests api={api} reloadKey={list.data} onAccepted={refresh} />
        {conversations === undefined ? (
          !list.error && <p className="empty-state">Loading…</p>
        ) : conversations.length === 0 ? (
          <p className="empty-state">No conversations yet. Start one with New message.</p>
        ) : (
          <ul className="inbox-conversations">
            {conversations.map((conversation) => (
              <ConversationRow
                key={conversation.conversationId}
                conversation={conversation}
                current={pane?.kind === "conversation" && pane.conversationId === conversation.conversationId}
                hasDraft={session.draft(conversation.conversationId) !== ""}
                onOpen={() => session.open({ kind: "conversation", conversationId: conversation.conversationId })}
              />
            ))}
          </ul>
        )}
      </aside>
      <section className="connections-panel inbox-pane" aria-label="Conversation">
        {pane?.kind === "conversation" ? (
          <ConversationPane key={pane.conversationId} api={api} conversationId={pane.conversationId} onChanged={refresh} />
        ) : pane?.kind === "new-message" ? (
          <NewMessageForm api={api} onSent={refresh} />
        ) : pane?.kind === "new-group" ? (
          <NewGroupForm api={api} onCreated={refresh} />
        ) : (
          <p className="empty-state">Choose a conversation, or start one with New message.</p>
        )}
      </section>
    </div>
  );
}

function ConversationRow({
  conversation,
  current,
  hasDraft,
  onOpen,
}: {
  conversation: InboxConversation;
  current: boolean;
  hasDraft: boolean;
  onOpen: () => void;
}) {
  const unread = conversation.unreadCount;
  return (
    <li>
      <button
        type="button"
        className="inbox-row"
        aria-current={current ? "true" : undefined}
        data-unread={unread > 0 ? "true" : undefined}
        onClick={onOpen}
      >
        <span className="inbox-row-head">
          <span className="inbox-row-title" dir="auto">
            {conversation.kind === "group" ? `${conversation.title} (group)` : conversation.title}
          </span>
          <span className="inbox-row-time">{shortTime(conversation.updatedAt)}</span>
          {unread > 0 && (
            <span className="badge" data-kind="count" role="img" aria-label={`${unread} unread`}>
              {unread}
            </span>
          )}
        </span>
        <span className="inbox-row-preview" dir="auto">
          {hasDraft ? <em>Draft · </em> : null}
          {conversation.preview ?? "No messages yet"}
        </span>
      </button>
    </li>
  );
}
