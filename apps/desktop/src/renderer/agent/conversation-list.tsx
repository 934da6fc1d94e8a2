import type { ConversationSummary } from "../../shared/desktop-api";
import { shortTime } from "../notes/note-time";

/**
 * The owner's conversations with their agent, newest first, and a way to start another. The
 * heartbeat's is marked so, and a conversation with messages not read yet shows how many.
 */
export function ConversationList({
  conversations,
  error,
  selected,
  disabled,
  onSelect,
}: {
  conversations: readonly ConversationSummary[] | undefined;
  error: string | null;
  selected: number | null;
  disabled: boolean;
  onSelect: (conversationId: number | null) => void;
}) {
  return (
    <nav className="conversation-pane" aria-label="Conversations">
      <button type="button" className="primary new-chat" disabled={disabled} onClick={() => onSelect(null)}>
        New chat
      </button>
      {error && <p className="conversation-load-error">Could not load the conversations: {error}</p>}
      {conversations === undefined && !error && <p className="empty-state">Loading…</p>}
      {conversations?.length === 0 && <p className="empty-state">No conversations yet.</p>}
      {conversations && conversations.length > 0 && (
        <ul className="conversation-list">
          {conversations.map((conversation) => (
            <li key={conversation.conversationId}>
              <button
                type="button"
                aria-current={conversation.conversationId === selected ? "true" : undefined}
                disabled={disabled && conversation.conversationId !== selected}
                data-unread={conversation.unreadCount > 0 || undefined}
                onClick={() => onSelect(conversation.conversationId)}
              >
                <span className="conversation-title" dir="auto">
                  {conversation.heartbeat && <span className="conversation-kind">Heartbeat · </span>}
                  {conversation.title || "Untitled"}
                </span>
                <span className="conversation-meta">
                  <time className="conversation-time" dateTime={conversation.updatedAt}>
                    {shortTime(conversation.updatedAt)}
                  </time>
                  {conversation.unreadCount > 0 && (
                    <span className="badge" role="img" aria-label={`${conversation.unreadCount} unread`}>
                      {conversation.unreadCount}
                    </span>
                  )}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}
