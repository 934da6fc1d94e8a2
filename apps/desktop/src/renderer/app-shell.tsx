import type { DesktopApi } from "../shared/desktop-api";
import { AppInfoBadge } from "./app-info";
import { ErrorNotice } from "./components/error-notice";
import { MainLayout } from "./layout/main-layout";
import { SignInScreen } from "./session/sign-in-screen";
import { useSession } from "./session/use-session";

function Brand({ api }: { api: DesktopApi }) {
  return (
    <div className="brand">
      <h1>Tandem</h1>
      <AppInfoBadge api={api} />
    </div>
  );
}

/** The whole window: the sign-in screen when signed out, the app when signed in. */
export function AppShell({ api }: { api: DesktopApi }) {
  const session = useSession(api);
  const { state, set } = session;
  if (state.status === "known" && state.info.state === "signed_in") {
    return <MainLayout api={api} session={state.info} header={<Brand api={api} />} onSignedOut={set} />;
  }
  return (
    <div className="app-shell signed-out">
      <header className="app-header">
        <Brand api={api} />
      </header>
      <main className="main-area">
        {state.status === "loading" && <p className="empty-state">Starting…</p>}
        {state.status === "failed" && <ErrorNotice message={`The host did not answer: ${state.message}`} onRetry={session.reload} />}
        {state.status === "known" && <SignInScreen api={api} lastServerUrl={state.info.serverUrl} onSignedIn={set} />}
      </main>
    </div>
  );
}
