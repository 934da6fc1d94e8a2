import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import type { ChatEnding, DesktopApi } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
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
  /** What is typed in the message box: kept across sections, and put back when a message could not be answered. */
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

/**
 * The Agent section's state, kept above the sections so a reply goes on streaming, and a draft
 * stays, while the owner looks at their notes. The agent runs on the server; the host sends the
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
  const [draft, setDraft] = useState("");
  const [sendError, setSendError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Refs for what callbacks read at the moment they run (a click's closure may be a render old).
  const run = useRef<{ chatId: string | null; stopRequested: boolean } | null>(null);
  const loadSeq = useRef(0);
  const alive = useRef(true);
  const transcriptRef = useRef(transcript);
  transcriptRef.current = transcript;
  const draftRef = useRef(draft);
  draftRef.current = draft;

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
      setSendError(null);
      load(conversationId);
    },
    [load],
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
      if (ending.status === "failed" && draftRef.current.trim() === "") setDraft(text);
      run.current = null;
      setBusy(false);
      refreshList();
    },
    [updateTurn, refreshList],
  );

  const follow = useCallback(
    async (chatId: string, key: string, text: string) => {
      let after = 0;
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
    [api, finish],
  );

  const send = useCallback(() => {
    const text = draftRef.current;
    if (run.current || text.trim() === "" || offline) return;
    const key = crypto.randomUUID();
    const conversationId = transcriptRef.current.conversationId;
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
        // Sent: the box is free for the next message (unless the owner already typed more).
        if (draftRef.current === text) setDraft("");
        if (current.stopRequested) void api.stopChat({ chatId }).catch(() => {});
        void follow(chatId, key, text);
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
  }, [api, follow, offline]);

  const stop = useCallback(() => {
    const current = run.current;
    if (!current) return;
    current.stopRequested = true;
    if (current.chatId) void api.stopChat({ chatId: current.chatId }).catch(() => {});
  }, [api]);

  const remove = useCallback(
    async (conversationId: number) => {
      await api.deleteConversation({ conversationId });
      if (transcriptRef.current.conversationId === conversationId) load(null);
      refreshList();
    },
    [api, load, refreshList],
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
    [listGeneration, attach, transcript, draft, busy, sendError, offline, open, send, stop, remove],
  );
  return <ChatContext.Provider value={session}>{children}</ChatContext.Provider>;
}

export function useChatSession(): ChatSession {
  const session = useContext(ChatContext);
  if (!session) throw new Error("useChatSession outside ChatSessionProvider");
  return session;
}
