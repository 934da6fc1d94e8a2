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
      return {
        status: "needs_reauth",
        label: "Needs sign-in",
        detail: reason
          ? `Its sign-in expired or was refused (${reason}). Sign in again to use its tools.`
          : "Its sign-in expired or was refused. Sign in again to use its tools.",
      };
    case "disconnected":
      return { status: "disconnected", label: "Disconnected", detail: "Not signed in: its tools are off until you connect it." };
    case "error":
      return { status: "error", label: "Error", detail: reason ?? "Something went wrong, and the server did not say what." };
    default:
      return { status: "error", label: "Unknown state", detail: `The server reports “${cut(status)}”, which this app does not know.` };
  }
}
