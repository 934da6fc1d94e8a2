import { createContext, type ReactNode, useCallback, useContext, useMemo, useRef, useState } from "react";
import type { InboxView } from "../../shared/desktop-api";

/** What the inbox on screen is: a conversation, a new message, a new group, or nothing chosen yet. */
export type InboxPane =
  | { readonly kind: "conversation"; readonly conversationId: number }
  | { readonly kind: "new-message" | "new-group" }
  | null;

export interface InboxSession {
  readonly view: InboxView;
  setView(view: InboxView): void;
  readonly pane: InboxPane;
  open(pane: InboxPane): void;
  /** The text typed for a conversation (or `new` for a new message): kept across conversations and sections. */
  draft(key: number | "new"): string;
  setDraft(key: number | "new", text: string): void;
}

const InboxContext = createContext<InboxSession | null>(null);

/**
 * The inbox's state that outlives its view: which view and conversation are open, and every draft.
 * Above the sections, so switching to Notes and back keeps both, and the toast can open a conversation.
 */
export function InboxSessionProvider({ children }: { children: ReactNode }) {
  const [view, setView] = useState<InboxView>("all");
  const [pane, open] = useState<InboxPane>(null);
  // Drafts change on every key press: a ref plus a version keeps the provider's value cheap to read.
  const drafts = useRef(new Map<number | "new", string>());
  const [version, setVersion] = useState(0);
  const draft = useCallback((key: number | "new") => drafts.current.get(key) ?? "", []);
  const setDraft = useCallback((key: number | "new", text: string) => {
    if (text === "") drafts.current.delete(key);
    else drafts.current.set(key, text);
    setVersion((value) => value + 1);
  }, []);
  const value = useMemo(() => ({ view, setView, pane, open, draft, setDraft }), [view, pane, draft, setDraft, version]);
  return <InboxContext.Provider value={value}>{children}</InboxContext.Provider>;
}

export function useInboxSession(): InboxSession {
  const session = useContext(InboxContext);
  if (!session) throw new Error("useInboxSession outside InboxSessionProvider");
  return session;
}
