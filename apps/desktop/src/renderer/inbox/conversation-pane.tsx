import { parseMarkdown } from "@tandem/core/rich-text";
import { useEffect, useMemo, useRef, useState } from "react";
import { type DesktopApi, INBOX_MESSAGE_MAX, type InboxMessage } from "../../shared/desktop-api";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { openLink } from "../components/open-link";
import { isSendKey, SendHint } from "../components/send-on-enter";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { useHostStatus } from "../layout/host-status";
import { fullTime, shortTime } from "../notes/note-time";
import { RichText } from "../rich-text/rich-text";
import { useInboxSession } from "./inbox-session";

/** Arrivals reload it at once; this catches what was written from another device. */
const CONVERSATION_POLL_MS = 15_000;

/**
 * One conversation: its messages oldest first (Markdown read as the Agent section reads it, never HTML), marked read
 * once on screen, and a reply written as the owner. The reply's text is the session's draft: it stays
 * when another conversation is opened, and when sending fails.
 */
export function ConversationPane({ api, conversationId, onChanged }: { api: DesktopApi; conversationId: number; onChanged: () => void }) {
  const session = useInboxSession();
  const { status } = useHostStatus();
  const detail = usePolled(() => api.openInboxConversation({ conversationId }), CONVERSATION_POLL_MS);
  const { refresh } = detail;
  const arrival = status?.inboxArrival;
  const arrivedHere = arrival?.conversationId === conversationId ? arrival.messageId : null;
  useEffect(() => {
    if (arrivedHere !== null) refresh();
  }, [arrivedHere, refresh]);

  // What others wrote is read once it is on screen.
  const unread = detail.data?.unreadCount ?? 0;
  const newest = detail.data?.messages.at(-1)?.id;
  useEffect(() => {
    if (unread === 0) return;
    api.markInboxRead({ conversationId }).then(onChanged, () => {});
  }, [api, conversationId, unread, newest, onChanged]);

  const end = useRef<HTMLLIElement>(null);
  const count = detail.data?.messages.length ?? 0;
  useEffect(() => {
    if (count > 0) end.current?.scrollIntoView({ block: "end" });
  }, [count]);

  const conversation = detail.data;
  return (
    <div className="inbox-conversation">
      {conversation ? (
        <header className="inbox-conversation-head">
          {conversation.kind === "group" && (
            <LeaveGroup api={api} conversationId={conversationId} title={conversation.title} onLeft={onChanged} />
          )}
          <h3 dir="auto">{conversation.title}</h3>
          <p className="hint" dir="auto">
            {conversation.kind === "group"
              ? `Group · ${conversation.members.map((member) => member.name).join(", ")}`
              : conversation.contact
                ? `@${conversation.contact.username}`
                : null}
          </p>
        </header>
      ) : (
        !detail.error && <p className="empty-state">Loading…</p>
      )}
      {detail.error && <ErrorNotice message={`This conversation could not be loaded: ${detail.error}`} onRetry={refresh} />}
      {conversation && (
        <ol className="inbox-messages" aria-label="Messages">
          {conversation.messages.length === 0 && <li className="empty-state">No messages yet.</li>}
          {conversation.messages.map((message) => (
            <MessageItem key={message.id} message={message} onOpenLink={(href) => void openLink(api, href)} />
          ))}
          <li ref={end} aria-hidden="true" className="inbox-messages-end" />
        </ol>
      )}
      <ReplyBox
        api={api}
        conversationId={conversationId}
        draft={session.draft(conversationId)}
        setDraft={(text) => session.setDraft(conversationId, text)}
        onSent={() => {
          refresh();
          onChanged();
        }}
      />
    </div>
  );
}

function MessageItem({ message, onOpenLink }: { message: InboxMessage; onOpenLink: (href: string) => void }) {
  // The first message to someone goes through the server's human mode, which stores it as sent by the owner's agent.
  const blocks = useMemo(() => parseMarkdown(message.content), [message.content]);
  const who = message.mine ? (message.senderType === "agent" ? "You, through your agent" : "You") : message.senderLabel;
  return (
    <li className="inbox-message" data-mine={message.mine ? "true" : undefined} data-sender-type={message.senderType}>
      <div className="inbox-message-meta">
        <span className="inbox-message-from" dir="auto">
          {who}
        </span>
        {message.senderType === "agent" && !message.mine && <span className="inbox-message-tag">agent</span>}
        <time dateTime={message.createdAt} title={fullTime(message.createdAt)}>
          {shortTime(message.createdAt)}
        </time>
      </div>
      {/* Someone else's words: Markdown into the closed model, as in the Agent section; HTML stays text. */}
      <RichText className="inbox-message-text" blocks={blocks} headingLevel={5} onOpenLink={onOpenLink} />
    </li>
  );
}

function ReplyBox({
  api,
  conversationId,
  draft,
  setDraft,
  onSent,
}: {
  api: DesktopApi;
  conversationId: number;
  draft: string;
  setDraft: (text: string) => void;
  onSent: () => void;
}) {
  const action = useAction();
  const [sent, setSent] = useState(false);
  // A retry of the same text reuses its id, so a send that reached the server before failing is not stored twice.
  const attempt = useRef<{ text: string; id: string } | null>(null);
  const send = () => {
    const content = draft;
    if (content.trim() === "") return;
    if (attempt.current?.text !== content) attempt.current = { text: content, id: crypto.randomUUID() };
    const clientMessageId = attempt.current.id;
    setSent(false);
    void action.run("send", async () => {
      await api.replyInInbox({ conversationId, content, clientMessageId });
      attempt.current = null;
      setDraft("");
      setSent(true);
      onSent();
    });
  };
  return (
    <form
      className="inbox-reply"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <textarea
        aria-label="Reply"
        value={draft}
        maxLength={INBOX_MESSAGE_MAX}
        rows={3}
        placeholder="Write a reply…"
        aria-describedby="inbox-reply-hint"
        onChange={(event) => {
          setSent(false);
          setDraft(event.target.value);
        }}
        onKeyDown={(event) => {
          // As in the Agent's box: Enter sends (once the last send is over), Shift+Enter is a new line.
          if (!isSendKey(event)) return;
          event.preventDefault();
          if (action.running === null) send();
        }}
      />
      <div className="inbox-reply-actions">
        <SendHint id="inbox-reply-hint" />
        {action.error ? (
          <ErrorNotice message={`Not sent: ${action.error}`} />
        ) : (
          sent && (
            <span className="hint" role="status">
              Sent.
            </span>
          )
        )}
        <button type="submit" className="primary" disabled={action.running !== null || draft.trim() === ""}>
          {action.running ? "Sending…" : "Send"}
        </button>
      </div>
    </form>
  );
}

/** Leaving a group, asked twice: its messages are then no longer the owner's to read, here or anywhere. */
function LeaveGroup({
  api,
  conversationId,
  title,
  onLeft,
}: {
  api: DesktopApi;
  conversationId: number;
  title: string;
  onLeft: () => void;
}) {
  const session = useInboxSession();
  const action = useAction();
  return (
    <div className="inbox-leave">
      <ConfirmButton
        label="Leave group"
        question={`Leave “${title}”? You will no longer see its messages, and only an admin can add you back.`}
        disabled={action.running !== null}
        onConfirm={() =>
          void action.run("leave", async () => {
            await api.leaveInboxGroup({ conversationId });
            session.setDraft(conversationId, "");
            session.open(null);
            onLeft();
          })
        }
      />
      {action.error && <ErrorNotice message={`You did not leave the group: ${action.error}`} />}
    </div>
  );
}
