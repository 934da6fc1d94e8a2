import { useId, useState } from "react";

interface ConfirmButtonProps {
  /** The button's label, and the confirming button's. */
  readonly label: string;
  readonly question: string;
  readonly onConfirm: () => void;
  readonly disabled?: boolean;
}

/**
 * A destructive action asked twice, inline: the first click asks, the second acts. An inline
 * question (not `window.confirm`) looks the same in Electron and in a browser, and is reachable by
 * keyboard and by tests through its role.
 */
export function ConfirmButton({ label, question, onConfirm, disabled }: ConfirmButtonProps) {
  const [asking, setAsking] = useState(false);
  const questionId = useId();
  if (!asking) {
    return (
      <button type="button" className="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <div className="confirm" role="alertdialog" aria-labelledby={questionId}>
      <p id={questionId}>{question}</p>
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {label}
      </button>
      {/* biome-ignore lint/a11y/noAutofocus: the question just appeared; its safe answer takes the focus. */}
      <button type="button" autoFocus onClick={() => setAsking(false)}>
        Cancel
      </button>
    </div>
  );
}
