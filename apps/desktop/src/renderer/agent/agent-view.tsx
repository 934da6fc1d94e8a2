import { useEffect } from "react";
import type { DesktopApi } from "../../shared/desktop-api";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { openLink } from "../components/open-link";
import { useAction } from "../components/use-action";
import { AgentOfflineNotice } from "./agent-offline-notice";
import { ChatComposer } from "./chat-composer";
import { useChatSession } from "./chat-session";
import { ChatTranscript } from "./chat-transcript";
import { ConversationList } from "./conversation-list";
import { useConversations } from "./use-conversations";
import { useMarkRead } from "./use-mark-read";
import "./agent.css";

/**
 * The Agent section: the owner's conversations with their agent beside the open one. The agent
 * runs on the server (it reads the notes and todos there); this view sends messages and shows the
 * reply as it streams, with a chip per tool call.
 */
export function AgentView({ api }: { api: DesktopApi }) {
  const chat = useChatSession();
  const { attach } = chat;
  useEffect(() => attach(), [attach]);
  const list = useConversations(api, chat.offline, chat.listGeneration);
  useMarkRead(api, chat, list);
  const removal = useAction();
  const { conversationId } = chat.transcript;
  // A chat started here has no title in the list until its first reply ends: its first message stands in.
  const firstSent = chat.transcript.entries.find((entry) => entry.kind === "live");
  const title =
    list.data?.find((conversation) => conversation.conversationId === conversationId)?.title ??
    (firstSent?.kind === "live" ? firstSent.turn.userText.trim().split("\n")[0] : null);
  const onOpenLink = (href: string) => void openLink(api, href);

  return (
    <div className="agent-view">
      <ConversationList
        conversations={list.data}
        error={chat.offline ? null : list.error}
        selected={conversationId}
        disabled={chat.busy}
        onSelect={chat.open}
      />
      <section className="chat-pane" aria-label="Conversation">
        <div className="chat-header">
          <h3 dir="auto">{conversationId === null ? "New chat" : (title ?? "Conversation")}</h3>
          {conversationId !== null && (
            <ConfirmButton
              label="Delete conversation"
              question="Delete this conversation and its messages?"
              disabled={chat.busy || chat.offline || removal.running !== null}
              onConfirm={() => void removal.run("delete", () => chat.remove(conversationId))}
            />
          )}
        </div>
        {removal.error && <ErrorNotice message={removal.error} />}
        {chat.offline && <AgentOfflineNotice />}
        <ChatTranscript transcript={chat.transcript} onOpenLink={onOpenLink} onRetry={() => chat.open(conversationId)} />
        {chat.sendError && <ErrorNotice message={chat.sendError} />}
        <ChatComposer />
      </section>
    </div>
  );
}
