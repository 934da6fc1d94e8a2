import { countOf } from "@tandem/core/counts";
import { useState } from "react";
import type { DesktopApi, GuestConversationItem } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { usePolled } from "../components/use-polled";
import { fullTime } from "../notes/note-time";

const GUESTS_POLL_MS = 20_000;

/**
 * Visitors of the owner's links and what they said: one link's (after Visitors) or all of them,
 * most recently active first, and one transcript at a time. Guests' words are untrusted: text only.
 */
export function GuestConversationsPanel({
  api,
  shareToken,
  onAll,
  offline,
}: {
  api: DesktopApi;
  shareToken: string | null;
  onAll: () => void;
  offline: boolean;
}) {
  const list = usePolled(() => api.listGuestConversations(shareToken ? { shareToken } : {}), GUESTS_POLL_MS);
  const [open, setOpen] = useState<string | null>(null);
  const conversations = list.data?.filter((row) => !shareToken || row.shareToken === shareToken);
  return (
    <section className="connections-panel" aria-labelledby="share-guests-title">
      <h3 id="share-guests-title">Visitors</h3>
      {shareToken && (
        <p className="hint">
          One link's visitors.{" "}
          <button type="button" className="link-button" onClick={onAll}>
            Show every link's
          </button>
        </p>
      )}
      {list.error && !offline && <ErrorNotice message={`The visitors could not be loaded: ${list.error}`} onRetry={list.refresh} />}
      {conversations === undefined ? (
        !list.error && <p className="empty-state">Loading…</p>
      ) : conversations.length === 0 ? (
        <p className="empty-state">No visitor yet.</p>
      ) : (
        <ul className="share-list">
          {byVisitor(conversations).map((visitor) => (
            <li key={visitor.key} className="share-row">
              <button
                type="button"
                className="share-guest"
                aria-expanded={open === visitor.key}
                onClick={() => setOpen(open === visitor.key ? null : visitor.key)}
              >
                <span className="share-name" dir="auto">
                  {visitor.guest}
                </span>
                <span className="hint">
                  {visitor.linkLabel ? `on “${visitor.linkLabel}” · ` : ""}
                  {visitor.conversations.length > 1 ? `${countOf(visitor.conversations.length, "conversation")} · ` : ""}
                  {countOf(visitor.messageCount, "message")} · {fullTime(visitor.lastActiveAt)}
                </span>
              </button>
              {open === visitor.key &&
                visitor.conversations.map((conversation) => (
                  <Transcript key={conversation.sessionId} api={api} sessionId={conversation.sessionId} />
                ))}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

interface Visitor {
  readonly key: string;
  readonly guest: string;
  readonly linkLabel: string;
  /** Most recently active first, as listed. */
  readonly conversations: GuestConversationItem[];
  readonly messageCount: number;
  readonly lastActiveAt: string;
}

/** One row per visitor of a link, however many conversations they had (the list comes most recent first). */
function byVisitor(conversations: readonly GuestConversationItem[]): Visitor[] {
  const visitors = new Map<string, Visitor>();
  for (const conversation of conversations) {
    const seen = visitors.get(conversation.visitorKey);
    visitors.set(
      conversation.visitorKey,
      seen
        ? { ...seen, conversations: [...seen.conversations, conversation], messageCount: seen.messageCount + conversation.messageCount }
        : {
            key: conversation.visitorKey,
            guest: conversation.guest,
            linkLabel: conversation.linkLabel,
            conversations: [conversation],
            messageCount: conversation.messageCount,
            lastActiveAt: conversation.lastActiveAt,
          },
    );
  }
  return [...visitors.values()];
}

function Transcript({ api, sessionId }: { api: DesktopApi; sessionId: string }) {
  const transcript = usePolled(() => api.getGuestConversation({ sessionId }), GUESTS_POLL_MS);
  if (transcript.error)
    return <ErrorNotice message={`The conversation could not be loaded: ${transcript.error}`} onRetry={transcript.refresh} />;
  if (!transcript.data) return <p className="empty-state">Loading…</p>;
  return (
    <ol className="share-transcript" aria-label={`Conversation with ${transcript.data.conversation.guest}`}>
      {transcript.data.messages.map((message) => (
        <li key={message.id} data-from={message.from}>
          <span className="share-transcript-from">{message.from === "guest" ? "Guest" : "Your agent"}</span>
          {/* A guest's words, and an answer that may quote them: text only, never markup. */}
          <p dir="auto">{message.content}</p>
        </li>
      ))}
    </ol>
  );
}
