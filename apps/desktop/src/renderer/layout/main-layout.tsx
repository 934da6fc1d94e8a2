import { type ReactNode, Suspense, useCallback, useEffect, useState } from "react";
import type { DesktopApi, SessionInfo } from "../../shared/desktop-api";
import { ChatSessionProvider, useChatSession } from "../agent/chat-session";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { LoadingView, lazyView } from "../components/lazy-view";
import { HeartbeatSessionProvider } from "../heartbeat/heartbeat-session";
import { HeartbeatToast } from "../heartbeat/heartbeat-toast";
import { InboxSessionProvider, useInboxSession } from "../inbox/inbox-session";
import { InboxToast } from "../inbox/inbox-toast";
import { NotesView } from "../notes/notes-view";
import { IS_MAC } from "../notes/shortcuts";
import { DocumentsProvider } from "../sync/documents-context";
import { BriefingSessionProvider } from "../today/briefing-session";
import { HostStatusProvider } from "./host-status";
import { SectionNav } from "./section-nav";
import { SECTIONS, type SectionId, sectionForKey, sectionFromHash } from "./sections";
import { SignOutButton } from "./sign-out-button";
import { SyncIndicator } from "./sync-indicator";

// Every section but Notes (the first screen) loads its code when first opened.
const AgentsView = lazyView(() => import("../agents/agents-view").then((module) => module.AgentsView));
const AgentView = lazyView(() => import("../agent/agent-view").then((module) => module.AgentView));
const ApprovalsView = lazyView(() => import("../approvals/approvals-view").then((module) => module.ApprovalsView));
const BridgeView = lazyView(() => import("../bridge/bridge-view").then((module) => module.BridgeView));
const ConnectionsView = lazyView(() => import("../connections/connections-view").then((module) => module.ConnectionsView));
const HeartbeatView = lazyView(() => import("../heartbeat/heartbeat-view").then((module) => module.HeartbeatView));
const InboxView = lazyView(() => import("../inbox/inbox-view").then((module) => module.InboxView));
const RawMemoryView = lazyView(() => import("../raw-memory/raw-memory-view").then((module) => module.RawMemoryView));
const ShareLinksView = lazyView(() => import("../share/share-links-view").then((module) => module.ShareLinksView));
const TodayView = lazyView(() => import("../today/today-view").then((module) => module.TodayView));
const TodosView = lazyView(() => import("../todos/todos-view").then((module) => module.TodosView));
const UsageView = lazyView(() => import("../usage/usage-view").then((module) => module.UsageView));

type SignedIn = Extract<SessionInfo, { state: "signed_in" }>;

function SectionView({ section, api, onSelect }: { section: SectionId; api: DesktopApi; onSelect: (section: SectionId) => void }) {
  const chat = useChatSession();
  // The heartbeat's messages are read in the Agent section, in their conversation.
  const openConversation = useCallback(
    (conversationId: number) => {
      chat.open(conversationId);
      onSelect("agent");
    },
    [chat.open, onSelect],
  );
  const inbox = useInboxSession();
  const inboxShowing = section === "inbox" && inbox.pane?.kind === "conversation" ? inbox.pane.conversationId : null;
  const openInboxConversation = (conversationId: number) => {
    inbox.open({ kind: "conversation", conversationId });
    onSelect("inbox");
  };
  return (
    <>
      <Suspense fallback={<LoadingView />}>
        <SectionBody section={section} api={api} openConversation={openConversation} />
      </Suspense>
      <HeartbeatToast api={api} showing={section === "agent" ? chat.transcript.conversationId : null} onOpen={openConversation} />
      <InboxToast api={api} showing={inboxShowing} onOpen={openInboxConversation} />
    </>
  );
}

function SectionBody({
  section,
  api,
  openConversation,
}: {
  section: SectionId;
  api: DesktopApi;
  openConversation: (conversationId: number) => void;
}) {
  switch (section) {
    case "notes":
      return <NotesView api={api} />;
    case "todos":
      return <TodosView />;
    case "today":
      return <TodayView api={api} />;
    case "agent":
      return <AgentView api={api} />;
    case "heartbeat":
      return <HeartbeatView api={api} onOpenConversation={openConversation} />;
    case "approvals":
      return <ApprovalsView api={api} />;
    case "bridge":
      return <BridgeView api={api} />;
    case "connections":
      return <ConnectionsView api={api} />;
    case "inbox":
      return <InboxView api={api} />;
    case "share":
      return <ShareLinksView api={api} />;
    case "raw-memory":
      return <RawMemoryView api={api} />;
    case "usage":
      return <UsageView api={api} />;
    case "agents":
      return <AgentsView api={api} />;
  }
}

/**
 * The signed-in app: sync state, who is signed in and sign-out in the header; sections in the
 * sidebar; the chosen section's view in the main area. Views that edit documents find them
 * through the {@link DocumentsProvider} here.
 */
export function MainLayout({
  api,
  session,
  header,
  onSignedOut,
}: {
  api: DesktopApi;
  session: SignedIn;
  header: ReactNode;
  onSignedOut: (session: SessionInfo) => void;
}) {
  const [section, setSection] = useState<SectionId>(() => sectionFromHash(window.location.hash) ?? "notes");
  // The tray and notifications open the window on a section by setting the hash.
  useEffect(() => {
    const follow = () => {
      const named = sectionFromHash(window.location.hash);
      if (named) setSection(named);
    };
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  // Mod+1 … Mod+9 open the sections, from anywhere but a modal dialog.
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.isComposing || document.querySelector("dialog[open]") !== null) return;
      const named = sectionForKey(event, IS_MAC);
      if (!named) return;
      event.preventDefault();
      setSection(named);
    };
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, []);
  const [signOutError, setSignOutError] = useState<string | null>(null);
  const signOut = useCallback(() => {
    setSignOutError(null);
    api.signOut().then(onSignedOut, (error: unknown) => setSignOutError(`Signing out failed: ${errorMessage(error)}`));
  }, [api, onSignedOut]);
  const title = SECTIONS.find((candidate) => candidate.id === section)?.title;
  return (
    <HostStatusProvider api={api}>
      {/* Above the sidebar and the header, which mark and warn about its unsaved edits; keyed by user like the rest. */}
      <HeartbeatSessionProvider key={session.userId} api={api}>
        <div className="app-shell">
          <header className="app-header">
            {header}
            <div className="header-tools">
              <SyncIndicator />
              <span className="signed-in-as" title={session.serverUrl}>
                {session.name ?? session.username}
              </span>
              <SignOutButton onSignOut={signOut} />
            </div>
            {signOutError && <ErrorNotice message={signOutError} />}
          </header>
          <SectionNav current={section} onSelect={setSection} />
          <main className="main-area" aria-labelledby="section-title">
            <h2 id="section-title" className="section-title">
              {title}
            </h2>
            {/* Keyed by user: another account starts from its own documents, conversations and briefing. */}
            <DocumentsProvider key={session.userId} api={api}>
              <ChatSessionProvider api={api}>
                <BriefingSessionProvider api={api}>
                  <InboxSessionProvider api={api}>
                    <SectionView section={section} api={api} onSelect={setSection} />
                  </InboxSessionProvider>
                </BriefingSessionProvider>
              </ChatSessionProvider>
            </DocumentsProvider>
          </main>
        </div>
      </HeartbeatSessionProvider>
    </HostStatusProvider>
  );
}
