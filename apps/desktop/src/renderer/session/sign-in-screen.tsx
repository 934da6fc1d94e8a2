import { useId, useState } from "react";
import { InputField } from "../components/field";
import { ApiKeyForm } from "./api-key-form";
import { CodeSignIn } from "./code-sign-in";
import type { SignInMethodProps } from "./sign-in-method";

/**
 * Signed out: the server's address, then either an API key or a device code approved in the
 * browser. The address is shared by both ways in.
 */
export function SignInScreen({
  api,
  lastServerUrl,
  onSignedIn,
}: Omit<SignInMethodProps, "serverUrl"> & { readonly lastServerUrl: string | null }) {
  const [serverUrl, setServerUrl] = useState(lastServerUrl ?? "");
  const headingId = useId();
  const method: SignInMethodProps = { api, serverUrl: serverUrl.trim(), onSignedIn };
  return (
    <section className="sign-in" aria-labelledby={headingId}>
      <h2 id={headingId}>Sign in</h2>
      <p className="hint">Your notes and todos stay on this device and sync with your Tandem server.</p>
      <InputField
        label="Server URL"
        type="url"
        required
        placeholder="https://tandem.example.com"
        autoComplete="url"
        value={serverUrl}
        onChange={(event) => setServerUrl(event.target.value)}
      />
      <ApiKeyForm {...method} />
      <div className="sign-in-divider" aria-hidden="true">
        or
      </div>
      <CodeSignIn {...method} />
    </section>
  );
}
