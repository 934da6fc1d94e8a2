/** Electron prefixes an IPC failure with the channel it came through: `Error invoking remote method 'tandem:x': Error: …`. */
const IPC_PREFIX = /^Error invoking remote method '[^']*': (?:\w*Error: )?/;
/** The server's refusals, as the API client words them: `409 request_already_resolved: This request was already accepted`. */
const API_STATUS = /^\d{3} [a-z0-9_]+: /;
/** The host names the method and field of an invalid argument (`searchNotes: invalid input: query …`), for developers. */
const INVALID_INPUT = /^\w+: invalid input(?::\s*)?/;

/**
 * What to show the owner when something throws: the host's sentence, without the internal names
 * transports put around it (IPC channels, method names, the server's status and error code). Host
 * calls reject with an Error naming the problem in words.
 */
export function errorMessage(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  // A browser's fetch that reached nothing: in web mode, the app's own local server is gone.
  if (error instanceof TypeError && /fetch/i.test(raw)) return "The app's background service is not answering. Restart the app.";
  const message = raw.replace(IPC_PREFIX, "").replace(API_STATUS, "");
  // Node's fetch, in the host, when the server is out of reach.
  if (message === "fetch failed") return "The server cannot be reached right now. Try again once you are back online.";
  if (INVALID_INPUT.test(message)) {
    const detail = message.replace(INVALID_INPUT, "").trim();
    return `The app sent something it should not have${detail ? ` (${detail})` : ""}. Please report this.`;
  }
  return message;
}
