import { type FormEvent, useId, useState } from "react";
import type { DesktopApi, SessionInfo } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";

/** Signs in with an API key; the host checks it against the server and keeps it in its secret store. */
export function ApiKeyForm({
  api,
  serverUrl,
  onSignedIn,
}: {
  api: DesktopApi;
  serverUrl: string;
  onSignedIn: (session: SessionInfo) => void;
}) {
  const [apiKey, setApiKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const keyId = useId();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api.signInWithApiKey({ serverUrl, apiKey: apiKey.trim() }));
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  };

  return (
    <form className="sign-in-form" aria-label="Sign in with an API key" onSubmit={submit}>
      <div className="field">
        <label htmlFor={keyId}>API key</label>
        <input
          id={keyId}
          type="password"
          required
          autoComplete="off"
          spellCheck={false}
          placeholder="svc_sk_…"
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
        />
      </div>
      <button type="submit" className="primary" disabled={busy || serverUrl === "" || apiKey.trim() === ""}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
      {error && <ErrorNotice message={error} />}
    </form>
  );
}
