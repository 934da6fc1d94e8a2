import { ErrorNotice } from "./error-notice";

/**
 * What the last action of a panel came to: why it failed, or what it did (in words), or nothing yet.
 * Styled by connections.css, whose panels the Share links section shares.
 */
export function ActionOutcome({ error, done }: { error: string | null; done: string | null }) {
  if (error) return <ErrorNotice message={error} />;
  return done ? (
    <p className="connections-done" role="status">
      {done}
    </p>
  ) : null;
}
