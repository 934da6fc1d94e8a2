import { type ReactNode, useState } from "react";

/**
 * A secret shown this once (a webhook's signing secret, an agent's API key): what it is, the value
 * in a read-only field with Copy, and Done to put it away. Styled by connections.css.
 */
export function ShownOnce({
  title,
  what,
  value,
  onDone,
  children,
}: {
  /** The region's name ("Signing secret"). */
  title: string;
  /** What the value is called in the buttons and messages ("secret", "key"). */
  what: string;
  value: string;
  onDone: () => void;
  /** What it is for and that it is not shown again. */
  children: ReactNode;
}) {
  const [said, setSaid] = useState<string | null>(null);
  const Word = what.charAt(0).toUpperCase() + what.slice(1);
  const copy = () => {
    navigator.clipboard.writeText(value).then(
      () => setSaid(`${Word} copied.`),
      () => setSaid(`This window may not copy by itself: select the ${what} and copy it.`),
    );
  };
  return (
    <section className="webhook-secret" aria-label={title}>
      <p>{children}</p>
      <div className="webhook-secret-row">
        <input readOnly value={value} aria-label={Word} spellCheck={false} onFocus={(event) => event.target.select()} />
        <button type="button" className="primary" onClick={copy}>
          Copy {what}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      {said && (
        <span className="hint" role="status">
          {said}
        </span>
      )}
    </section>
  );
}
