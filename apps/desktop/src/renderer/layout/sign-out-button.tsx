import { useEffect, useId, useState } from "react";
import { useHeartbeatSession } from "../heartbeat/heartbeat-session";
import { useHostStatus } from "./host-status";
import "./sign-out.css";

type Step = "idle" | "asking" | "waiting";

/**
 * Sign out, after a warning when changes have not reached the server yet: the owner may wait for
 * them (sign-out follows as soon as everything is synced) or sign out anyway; the changes stay on
 * this device either way and are sent when the same account signs in again. Heartbeat edits not
 * saved are another matter (they are nowhere else): the warning says they would be lost.
 */
export function SignOutButton({ onSignOut }: { onSignOut: () => void }) {
  const { status } = useHostStatus();
  const pending = status?.sync.pending ?? 0;
  const synced = status?.sync.state === "synced" && pending === 0;
  const { unsaved } = useHeartbeatSession();
  const [step, setStep] = useState<Step>("idle");
  const questionId = useId();

  useEffect(() => {
    if (step === "waiting" && synced) {
      setStep("idle");
      onSignOut();
    }
  }, [step, synced, onSignOut]);

  const button = (
    <button
      type="button"
      aria-expanded={step === "idle" ? undefined : true}
      // While the warning is open the button closes it, as Cancel does.
      onClick={() => (step !== "idle" ? setStep("idle") : pending > 0 || unsaved ? setStep("asking") : onSignOut())}
    >
      Sign out
    </button>
  );
  if (step === "idle") return <span className="sign-out">{button}</span>;
  const offline = status?.sync.state === "offline";
  // The warning opens under the button, over the page (sign-out.css): the header keeps its height.
  return (
    <span className="sign-out">
      {button}
      <SignOutWarning
        questionId={questionId}
        step={step}
        pending={pending}
        offline={offline}
        unsaved={unsaved}
        onWait={() => setStep("waiting")}
        onSignOut={onSignOut}
        onCancel={() => setStep("idle")}
      />
    </span>
  );
}

interface SignOutWarningProps {
  readonly questionId: string;
  readonly step: Exclude<Step, "idle">;
  readonly pending: number;
  readonly offline: boolean;
  readonly unsaved: boolean;
  readonly onWait: () => void;
  readonly onSignOut: () => void;
  readonly onCancel: () => void;
}

function SignOutWarning({ questionId, step, pending, offline, unsaved, onWait, onSignOut, onCancel }: SignOutWarningProps) {
  return (
    <div
      className="confirm sign-out-warning"
      role="alertdialog"
      aria-labelledby={questionId}
      onKeyDown={(event) => {
        if (event.key === "Escape") onCancel();
      }}
    >
      <p id={questionId}>
        {step === "waiting"
          ? `Waiting for ${pending} ${pending === 1 ? "change" : "changes"} to reach the server…${offline ? " (offline)" : ""}`
          : [
              unsaved ? "Your heartbeat settings or checklist have changes that are not saved; signing out loses them." : null,
              pending > 0
                ? `${pending} ${pending === 1 ? "document has changes" : "documents have changes"} not on the server yet. They stay on this device and are sent when you sign in again.`
                : null,
            ]
              .filter(Boolean)
              .join(" ")}
      </p>
      {step === "asking" && pending > 0 && (
        <button type="button" className="primary" onClick={onWait}>
          Wait for sync
        </button>
      )}
      <button type="button" className="danger" onClick={onSignOut}>
        Sign out anyway
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
