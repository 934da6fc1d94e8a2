import { useId, useState } from "react";
import type { DesktopApi, SessionInfo } from "../../shared/desktop-api";
import { ApiKeyForm } from "./api-key-form";
import { CodeSignIn } from "./code-sign-in";

/**
 * Signed out: the server's address, then either an API key or a device code approved in the
 * browser. The address is shared by both ways in.
 */
export function SignInScreen({
  api,
  lastServerUrl,
  onSignedIn,
}: {
  api: DesktopApi;
  lastServerUrl: string | null;
  onSignedIn: (session: SessionInfo) => void;
}) {
  const [serverUrl, setServerUrl] = useState(lastServerUrl ?? "");
  const headingId = useId();
  const serverUrlId = useId();
  return (
    <section className="sign-in" aria-labelledby={headingId}>
      <h2 id={headingId}>Sign in</h2>
      <p className="hint">Your notes and todos stay on this device and sync with your Tandem server.</p>
      <div className="field">
        <label htmlFor={serverUrlId}>Server URL</label>
        <input
          id={serverUrlId}
          type="url"
          required
          placeholder="https://tandem.example.com"
          autoComplete="url"
          value={serverUrl}
          onChange={(event) => setServerUrl(event.target.value)}
        />
      </div>
      <ApiKeyForm api={api} serverUrl={serverUrl.trim()} onSignedIn={onSignedIn} />
      <div className="sign-in-divider" aria-hidden="true">
        or
      </div>
      <CodeSignIn api={api} serverUrl={serverUrl.trim()} onSignedIn={onSignedIn} />
    </section>
  );
}
