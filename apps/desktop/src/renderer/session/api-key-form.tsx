import { type FormEvent, useState } from "react";
import { ErrorNotice } from "../components/error-notice";
import { InputField } from "../components/field";
import { useAction } from "../components/use-action";
import type { SignInMethodProps } from "./sign-in-method";

/** Signs in with an API key; the host checks it against the server and keeps it in its secret store. */
export function ApiKeyForm({ api, serverUrl, onSignedIn }: SignInMethodProps) {
  const [apiKey, setApiKey] = useState("");
  const action = useAction();
  const busy = action.running !== null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run("sign-in", async () => onSignedIn(await api.signInWithApiKey({ serverUrl, apiKey: apiKey.trim() })));
  };

  return (
    <form className="sign-in-form" aria-label="Sign in with an API key" onSubmit={submit}>
      <InputField
        label="API key"
        type="password"
        required
        autoComplete="off"
        spellCheck={false}
        placeholder="svc_sk_…"
        value={apiKey}
        onChange={(event) => setApiKey(event.target.value)}
      />
      <button type="submit" className="primary" disabled={busy || serverUrl === "" || apiKey.trim() === ""}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
      {action.error && <ErrorNotice message={action.error} />}
    </form>
  );
}
