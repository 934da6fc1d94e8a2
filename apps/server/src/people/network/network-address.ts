import type { ContactRequestType } from "@tandem/core";

/** The suffix that addresses a person's agent rather than the person: `bob_coo`. */
const AGENT_SUFFIX = "_coo";

export interface NetworkAddress {
  username: string;
  type: ContactRequestType;
}

/**
 * Reads the `to` of a handshake request: `bob` asks bob for contact, `bob_coo` for agent access.
 * Usernames are lowercase and may not end in `_coo`, so the suffix is never ambiguous; a leading
 * `@` is dropped because people write handles that way.
 */
export function parseNetworkAddress(to: string): NetworkAddress {
  const handle = to.trim().toLowerCase().replace(/^@/, "");
  if (handle.endsWith(AGENT_SUFFIX)) return { username: handle.slice(0, -AGENT_SUFFIX.length), type: "agent" };
  return { username: handle, type: "friend" };
}
