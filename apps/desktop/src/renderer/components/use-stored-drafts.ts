import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { DesktopApi, DraftConversation, DraftScope } from "../../shared/desktop-api";

/** Unsent messages of a section, per conversation, kept by the host (see host/drafts/drafts.ts). */
export interface StoredDrafts {
  /** What is typed for a conversation (`new`: a new message or chat); "" for nothing. */
  get(conversation: DraftConversation): string;
  /** Keeps what is typed, here at once and on this computer a moment later; "" forgets it (sent). */
  set(conversation: DraftConversation, text: string): void;
  /** Hands one conversation's draft to another that has none (a new chat got its id, say). */
  move(from: DraftConversation, to: DraftConversation): void;
  /** Changes with every change of any draft, for memoised values that read them. */
  readonly version: number;
}

// The page's write order, carried to the host with each write: later than every earlier write of this
// page, and than every draft the host gave it (written by an earlier page, before a reload).
let lastRevision = 0;
const nextRevision = () => {
  lastRevision = Math.max(Date.now(), lastRevision + 1);
  return lastRevision;
};

/**
 * Writes drafts to the host as they are typed: one write at a time per conversation, the latest text
 * following the one on its way, so a burst of keys costs two writes rather than one each. As the page
 * goes away (reload, window closed) whatever is waiting goes at once; its revision keeps it from
 * being replaced by the older write still on its way.
 */
class DraftWriter {
  readonly #sending = new Set<DraftConversation>();
  readonly #waiting = new Map<DraftConversation, { text: string; revision: number }>();

  constructor(
    private readonly api: DesktopApi,
    private readonly scope: DraftScope,
  ) {}

  write(conversation: DraftConversation, text: string): void {
    const next = { text, revision: nextRevision() };
    if (this.#sending.has(conversation)) this.#waiting.set(conversation, next);
    else this.#send(conversation, next);
  }

  flush(): void {
    for (const [conversation, next] of this.#waiting) {
      this.#waiting.delete(conversation);
      this.#send(conversation, next);
    }
  }

  #send(conversation: DraftConversation, { text, revision }: { text: string; revision: number }): void {
    this.#sending.add(conversation);
    const done = () => {
      this.#sending.delete(conversation);
      const next = this.#waiting.get(conversation);
      if (!next) return;
      this.#waiting.delete(conversation);
      this.#send(conversation, next);
    };
    // A write that fails (signed out meanwhile, the host gone) leaves the text on screen; the next key writes again.
    this.api.saveDraft({ scope: this.scope, conversation, text, revision }).then(done, done);
  }
}

/**
 * A section's drafts, read from the host once and written back as they change, so what was typed
 * survives a reload and a restart until it is sent. Text typed before the host has answered wins
 * over what it kept.
 */
export function useStoredDrafts(api: DesktopApi, scope: DraftScope): StoredDrafts {
  const texts = useRef(new Map<DraftConversation, string>());
  const typed = useRef(new Set<DraftConversation>());
  const [version, setVersion] = useState(0);
  const writer = useMemo(() => new DraftWriter(api, scope), [api, scope]);

  useEffect(() => {
    let alive = true;
    api.listDrafts({ scope }).then(
      (items) => {
        if (!alive) return;
        for (const item of items) {
          lastRevision = Math.max(lastRevision, item.revision);
          if (!typed.current.has(item.conversation)) texts.current.set(item.conversation, item.text);
        }
        setVersion((value) => value + 1);
      },
      // Not readable (an older host, signed out meanwhile): drafts then live as long as the page.
      () => {},
    );
    const flush = () => writer.flush();
    window.addEventListener("pagehide", flush);
    return () => {
      alive = false;
      window.removeEventListener("pagehide", flush);
      writer.flush();
    };
  }, [api, scope, writer]);

  const get = useCallback((conversation: DraftConversation) => texts.current.get(conversation) ?? "", []);
  const set = useCallback(
    (conversation: DraftConversation, text: string) => {
      typed.current.add(conversation);
      if (text === "") texts.current.delete(conversation);
      else texts.current.set(conversation, text);
      writer.write(conversation, text);
      setVersion((value) => value + 1);
    },
    [writer],
  );
  const move = useCallback(
    (from: DraftConversation, to: DraftConversation) => {
      const text = get(from);
      if (text === "" || get(to) !== "") return;
      set(to, text);
      set(from, "");
    },
    [get, set],
  );
  return useMemo(() => ({ get, set, move, version }), [get, set, move, version]);
}
