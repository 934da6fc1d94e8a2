import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import type { ChatEnding, DesktopApi, DraftConversation } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { useStoredDrafts } from "../components/use-stored-drafts";
import { useHostStatus } from "../layout/host-status";
import { applyChatEvents, type Entry, endTurn, type LiveTurn, startedConversation } from "./chat-turns";

export interface Transcript {
  /** null: a new chat, not on the server until its first message. */
  readonly conversationId: number | null;
  readonly status: "loading" | "ready" | "failed";
  readonly error: string | null;
  readonly entries: readonly Entry[];
}

export interface ChatSession {
  /** Changes whenever the conversation list is worth asking for again (a reply ended, one was deleted, back online). */
  readonly listGeneration: number;
  /** The Agent view is on screen while attached: only then is anything reloaded by itself. Answers the detach. */
  attach(): () => void;
  readonly transcript: Transcript;
  /**
   * What is typed in the message box for the open conversation: kept per conversation on this computer
   * (across sections, reloads and restarts) until sent, and put back when a message could not be answered.
   */
  readonly draft: string;
  setDraft(text: string): void;
  /** A message is being sent or answered: sending, switching and deleting wait, Stop works. */
  readonly busy: boolean;
  /** Why the last message was not sent (its text is still in the box). */
  readonly sendError: string | null;
  /** The server cannot be reached: the agent cannot answer, and nothing is sent. */
  readonly offline: boolean;
  open(conversationId: number | null): void;
  send(): void;
  stop(): void;
  remove(conversationId: number): Promise<void>;
}

const ChatContext = createContext<ChatSession | null>(null);

const NEW_CHAT: Transcript = { conversationId: null, status: "ready", error: null, entries: [] };

/** Whose draft the box shows: the open conversation's, or the new chat's. */
const draftKey = (transcript: Transcript): DraftConversation => transcript.conversationId ?? "new";

/**
 * The Agent section's state, kept above the sections so a reply goes on streaming, and drafts
 * stay (the host keeps them, see use-stored-drafts.ts), while the owner looks at their notes. The agent runs on the server; the host sends the
 * message and reads the reply's stream, and this follows it with `readChat`.
 */
export function ChatSessionProvider({ api, children }: { api: DesktopApi; children: ReactNode }) {
  const offline = useHostStatus().status?.sync.state === "offline";
  const [listGeneration, setListGeneration] = useState(0);
  const refreshList = useCallback(() => setListGeneration((generation) => generation + 1), []);
  const visible = useRef(false);
  const attach = useCallback(() => {
    visible.current = true;
    return () => {
      visible.current = false;
    };
  }, []);
  const [transcript, setTranscript] = useState<Transcript>(NEW_CHAT);
  const drafts = useStoredDrafts(api, "agent");
  const [sendError, setSendError] = useState<string | null>(null);
  const sendErrorRef = useRef(sendError);
  sendErrorRef.current = sendError;
  const [busy, setBusy] = useState(false);
  // Refs for what callbacks read at the moment they run (a click's closure may be a render old).
  const run = useRef<{ chatId: string | null; stopRequested: boolean } | null>(null);
  const loadSeq = useRef(0);
  const alive = useRef(true);
  const transcriptRef = useRef(transcript);
  transcriptRef.current = transcript;
  const draft = drafts.get(draftKey(transcript));
  // The draft of the conversation open at the moment a callback runs.
  const currentDraft = useCallback(() => drafts.get(draftKey(transcriptRef.current)), [drafts.get]);
  const setDraft = useCallback((text: string) => drafts.set(draftKey(transcriptRef.current), text), [drafts.set]);

  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  const load = useCallback(
    (conversationId: number | null) => {
      const seq = ++loadSeq.current;
      if (conversationId === null) {
        setTranscript(NEW_CHAT);
        return;
      }
      setTranscript({ conversationId, status: "loading", error: null, entries: [] });
      api.getConversation({ conversationId }).then(
        (conversation) => {
          if (seq !== loadSeq.current) return;
          const entries = conversation.messages.map((message): Entry => ({ kind: "saved", message }));
          setTranscript({ conversationId, status: "ready", error: null, entries });
        },
        (error: unknown) => {
          if (seq !== loadSeq.current) return;
          setTranscript({ conversationId, status: "failed", error: errorMessage(error), entries: [] });
        },
      );
    },
    [api],
  );

  const open = useCallback(
    (conversationId: number | null) => {
      if (run.current) return;
      // A message refused here (its conversation deleted elsewhere, say) goes along to a new chat, where it can be sent.
      const from = draftKey(transcriptRef.current);
      if (conversationId === null && sendErrorRef.current !== null && from !== "new") drafts.move(from, "new");
      setSendError(null);
      load(conversationId);
    },
    [load, drafts.move],
  );

  // Back online: the list, and a conversation that could not be loaded, are worth asking for again (if shown).
  const wasOffline = useRef(offline);
  useEffect(() => {
    if (wasOffline.current && !offline && visible.current) {
      refreshList();
      const current = transcriptRef.current;
      if (current.status === "failed" && !run.current) load(current.conversationId);
    }
    wasOffline.current = offline;
  }, [offline, refreshList, load]);

  const updateTurn = useCallback((key: string, update: (turn: LiveTurn) => LiveTurn) => {
    setTranscript((current) => ({
      ...current,
      entries: current.entries.map((entry) =>
        entry.kind === "live" && entry.turn.key === key ? { kind: "live", turn: update(entry.turn) } : entry,
      ),
    }));
  }, []);

  const finish = useCallback(
    (key: string, text: string, ending: ChatEnding) => {
      updateTurn(key, (turn) => endTurn(turn, ending));
      // A failed reply is not kept by the server, message included: the text goes back in the box.
      if (ending.status === "failed" && currentDraft().trim() === "") setDraft(text);
      run.current = null;
      setBusy(false);
      refreshList();
    },
    [updateTurn, refreshList, currentDraft, setDraft],
  );

  const follow = useCallback(
    async (chatId: string, key: string, text: string, fromNewChat: boolean) => {
      let after = 0;
      let named = !fromNewChat;
      for (;;) {
        if (!alive.current) return;
        let progress: Awaited<ReturnType<DesktopApi["readChat"]>>;
        try {
          progress = await api.readChat({ chatId, after });
        } catch (error) {
          finish(key, text, { status: "failed", error: errorMessage(error) });
          return;
        }
        after = progress.next;
        const started = startedConversation(progress.events);
        // A new chat now has an id: what was typed meanwhile for "new" stays in the box, under that id.
        if (!named && typeof started === "number") {
          named = true;
          drafts.move("new", started);
        }
        setTranscript((current) => ({
          ...current,
          // A new chat is on the server from its first message: it now has an id.
          conversationId: current.conversationId ?? started,
          entries: current.entries.map((entry) =>
            entry.kind === "live" && entry.turn.key === key ? { kind: "live", turn: applyChatEvents(entry.turn, progress.events) } : entry,
          ),
        }));
        if (progress.ended) {
          finish(key, text, progress.ended);
          return;
        }
      }
    },
    [api, finish, drafts.move],
  );

  const send = useCallback(() => {
    const text = currentDraft();
    if (run.current || text.trim() === "" || offline) return;
    const key = crypto.randomUUID();
    const conversationId = transcriptRef.current.conversationId;
    const sentFrom = draftKey(transcriptRef.current);
    const turn: LiveTurn = { key, userText: text, answer: "", tools: [], phase: "sending", ending: null, workingMs: null };
    run.current = { chatId: null, stopRequested: false };
    setBusy(true);
    setSendError(null);
    setTranscript((current) => ({ ...current, entries: [...current.entries, { kind: "live", turn }] }));
    const userTimezone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    api.startChat({ message: text, userTimezone, ...(conversationId === null ? {} : { conversationId }) }).then(
      ({ chatId }) => {
        const current = run.current;
        if (!current) return;
        current.chatId = chatId;
        // Sent: the box is free for the next message (unless the owner already typed more), here and on disk.
        if (drafts.get(sentFrom) === text) drafts.set(sentFrom, "");
        if (current.stopRequested) void api.stopChat({ chatId }).catch(() => {});
        void follow(chatId, key, text, conversationId === null);
      },
      (error: unknown) => {
        // Not sent: the message leaves the transcript and stays in the box, with the reason.
        setTranscript((current) => ({
          ...current,
          entries: current.entries.filter((entry) => entry.kind !== "live" || entry.turn.key !== key),
        }));
        setSendError(errorMessage(error));
        run.current = null;
        setBusy(false);
      },
    );
  }, [api, follow, offline, currentDraft, drafts.get, drafts.set]);

  const stop = useCallback(() => {
    const current = run.current;
    if (!current) return;
    current.stopRequested = true;
    if (current.chatId) void api.stopChat({ chatId: current.chatId }).catch(() => {});
  }, [api]);

  const remove = useCallback(
    async (conversationId: number) => {
      await api.deleteConversation({ conversationId });
      // Nothing can be sent to it any more: its draft goes with it.
      drafts.set(conversationId, "");
      if (transcriptRef.current.conversationId === conversationId) load(null);
      refreshList();
    },
    [api, load, refreshList, drafts.set],
  );

  const session = useMemo<ChatSession>(
    () => ({
      listGeneration,
      attach,
      transcript,
      draft,
      setDraft,
      busy,
      sendError,
      offline,
      open,
      send,
      stop,
      remove,
    }),
    [listGeneration, attach, transcript, draft, setDraft, busy, sendError, offline, open, send, stop, remove],
  );
  return <ChatContext.Provider value={session}>{children}</ChatContext.Provider>;
}

export function useChatSession(): ChatSession {
  const session = useContext(ChatContext);
  if (!session) throw new Error("useChatSession outside ChatSessionProvider");
  return session;
}
