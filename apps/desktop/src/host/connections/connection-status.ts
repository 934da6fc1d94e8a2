import type { ConnectionStatus, ConnectionStatusWords } from "../../shared/desktop-api";

/** A remote server's error can be a whole page: this much is enough to say what went wrong. */
const DETAIL_MAX = 300;

const KNOWN: readonly ConnectionStatus[] = ["connected", "needs_reauth", "disconnected", "error"];

function cut(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > DETAIL_MAX ? `${oneLine.slice(0, DETAIL_MAX)}…` : oneLine;
}

/**
 * A remote tool server's or an integration's status in words the owner can act on. `error` is the
 * server's account of what went wrong last (a remote server's words: untrusted, shown as text). A
 * status this app does not know yet (a newer server) reads as an error naming it, never as connected.
 */
export function statusWords(status: string, error?: string | null): ConnectionStatusWords {
  const reason = typeof error === "string" && error.trim() !== "" ? cut(error) : null;
  const known = (KNOWN as readonly string[]).includes(status) ? (status as ConnectionStatus) : null;
  switch (known) {
    case "connected":
      // Connected with a note (tools skipped, say) still says so.
      return { status: "connected", label: "Connected", detail: reason };
    case "needs_reauth":
      // The server's reason here is always "authorize again" in API terms: the words below say it.
      return {
        status: "needs_reauth",
        label: "Needs sign-in",
        detail: "Its sign-in expired or was refused. Sign in again to use its tools.",
      };
    case "disconnected":
      // Disconnected with a reason is the server saying it asks for authorization (never signed in);
      // without one, it was disconnected on purpose (Disconnect, or a new address).
      return reason
        ? { status: "disconnected", label: "Not signed in", detail: "It asks you to sign in before your agent can use its tools." }
        : {
            status: "disconnected",
            label: "Disconnected",
            detail: "Its tools are off until it is connected again (Refresh, or Sign in if it needs one).",
          };
    case "error":
      return { status: "error", label: "Error", detail: reason ?? "Something went wrong, and the server did not say what." };
    default:
      return { status: "error", label: "Unknown state", detail: `The server reports “${cut(status)}”, which this app does not know.` };
  }
}
