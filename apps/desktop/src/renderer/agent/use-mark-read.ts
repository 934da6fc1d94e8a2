import { useEffect, useRef } from "react";
import type { ConversationSummary, DesktopApi } from "../../shared/desktop-api";
import type { Polled } from "../components/use-polled";
import type { ChatSession } from "./chat-session";

/**
 * The open conversation's unread messages (the heartbeat's arrive unread) are marked read once
 * they are on screen: when it is opened, or, for one that arrives while it is open, after it is
 * loaded. The list is then asked for again, so its badge, and the sidebar's, go.
 */
export function useMarkRead(api: DesktopApi, chat: ChatSession, list: Polled<ConversationSummary[]>): void {
  const { transcript, busy, offline, open } = chat;
  const row = list.data?.find((conversation) => conversation.conversationId === transcript.conversationId);
  const conversationId = row?.conversationId;
  const unread = row?.unreadCount ?? 0;
  const messageCount = row?.messageCount ?? 0;
  // A live exchange is two messages (the owner's and the answer).
  const shown = transcript.entries.reduce((count, entry) => count + (entry.kind === "saved" ? 1 : 2), 0);
  const reloadedFor = useRef<string | null>(null);
  const marking = useRef(false);
  const { refresh, data } = list;

  useEffect(() => {
    if (conversationId === undefined || unread === 0 || busy || offline || transcript.status !== "ready" || marking.current) return;
    // Once per count: a conversation longer than what is loaded must not reload forever.
    const key = `${conversationId}:${messageCount}`;
    if (messageCount > shown && reloadedFor.current !== key) {
      reloadedFor.current = key;
      open(conversationId);
      return;
    }
    marking.current = true;
    api
      .markConversationRead({ conversationId })
      .then(refresh, () => {}) // Not marked (offline, say): the next list, every 30 s, tries again.
      .finally(() => {
        marking.current = false;
      });
    // `data` changes with every list answer: a failed mark is tried again with the next.
  }, [api, conversationId, unread, messageCount, shown, busy, offline, transcript.status, open, refresh, data]);
}
