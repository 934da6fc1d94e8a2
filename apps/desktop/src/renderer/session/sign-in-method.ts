import type { DesktopApi, SessionInfo } from "../../shared/desktop-api";

/** What each way in on the sign-in screen is given: the server's address it shares, and where a new session goes. */
export interface SignInMethodProps {
  readonly api: DesktopApi;
  readonly serverUrl: string;
  readonly onSignedIn: (session: SessionInfo) => void;
}
