import { useEffect, useState } from "react";
import type { PairingPrompt } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { openLink } from "../components/open-link";
import type { SignInMethodProps } from "./sign-in-method";

/** How often to ask the host whether the owner approved the code (the server asks for ≥ 1 s). */
const POLL_MS = 2000;

type Flow =
  | { readonly step: "idle" }
  | { readonly step: "starting" }
  | { readonly step: "waiting"; readonly prompt: PairingPrompt }
  | { readonly step: "ended"; readonly message: string };

/**
 * Device-code sign-in: the host asks the server for a code, the owner approves it in a browser
 * where they are signed in, and the host's poll picks up the credential.
 */
export function CodeSignIn({ api, serverUrl, onSignedIn }: SignInMethodProps) {
  const [flow, setFlow] = useState<Flow>({ step: "idle" });
  const [error, setError] = useState<string | null>(null);

  const start = async () => {
    setFlow({ step: "starting" });
    setError(null);
    try {
      setFlow({ step: "waiting", prompt: await api.startSignInPairing({ serverUrl }) });
    } catch (failure) {
      setError(errorMessage(failure));
      setFlow({ step: "idle" });
    }
  };

  const waiting = flow.step === "waiting";
  useEffect(() => {
    if (!waiting) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const progress = await api.pollSignInPairing();
        if (stopped) return;
        if (progress.status === "approved") {
          onSignedIn(progress.session);
          return;
        }
        if (progress.status === "denied") return setFlow({ step: "ended", message: "The code was denied." });
        if (progress.status === "expired") return setFlow({ step: "ended", message: "The code expired. Start again for a new one." });
        setError(null);
      } catch (failure) {
        // A failed poll (say, the server restarting) is retried; the owner sees why meanwhile.
        if (!stopped) setError(errorMessage(failure));
      }
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    };
    timer = setTimeout(poll, POLL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [api, waiting, onSignedIn]);

  return (
    <section className="code-sign-in" aria-label="Sign in with a code">
      {flow.step === "waiting" ? (
        <div className="pairing-prompt">
          <p>Approve this code on your server, signed in as yourself:</p>
          <p className="user-code" data-testid="user-code">
            {flow.prompt.userCode}
          </p>
          <p>
            <a
              href={flow.prompt.approvalUrl}
              target="_blank"
              rel="noopener noreferrer"
              onClick={(event) => {
                event.preventDefault();
                void openLink(api, flow.prompt.approvalUrl);
              }}
            >
              Open the approval page
            </a>
          </p>
          <p className="hint" aria-live="polite">
            Waiting for approval…
          </p>
          <button type="button" onClick={() => setFlow({ step: "idle" })}>
            Cancel
          </button>
        </div>
      ) : (
        <>
          {flow.step === "ended" && <p className="hint">{flow.message}</p>}
          <button type="button" disabled={flow.step === "starting" || serverUrl === ""} onClick={() => void start()}>
            {flow.step === "starting" ? "Asking the server…" : "Sign in with a code"}
          </button>
        </>
      )}
      {error && <ErrorNotice message={error} />}
    </section>
  );
}
