import { createContext, type ReactNode, useContext, useMemo, useState } from "react";
import type { DesktopApi, InboxView } from "../../shared/desktop-api";
import { useStoredDrafts } from "../components/use-stored-drafts";

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
  /**
   * The text typed for a conversation (or `new` for a new message): kept across conversations and
   * sections, and on this computer across reloads and restarts, until it is sent.
   */
  draft(key: number | "new"): string;
  setDraft(key: number | "new", text: string): void;
}

const InboxContext = createContext<InboxSession | null>(null);

/**
 * The inbox's state that outlives its view: which view and conversation are open, and every draft
 * (kept by the host, see use-stored-drafts.ts). Above the sections, so switching to Notes and back
 * keeps both, and the toast can open a conversation.
 */
export function InboxSessionProvider({ api, children }: { api: DesktopApi; children: ReactNode }) {
  const [view, setView] = useState<InboxView>("all");
  const [pane, open] = useState<InboxPane>(null);
  const { get: draft, set: setDraft, version } = useStoredDrafts(api, "inbox");
  // `version` changes whenever a draft does, which `draft` reads: the value is new for every change.
  const value = useMemo(() => ({ view, setView, pane, open, draft, setDraft }), [view, pane, draft, setDraft, version]);
  return <InboxContext.Provider value={value}>{children}</InboxContext.Provider>;
}

export function useInboxSession(): InboxSession {
  const session = useContext(InboxContext);
  if (!session) throw new Error("useInboxSession outside InboxSessionProvider");
  return session;
}
