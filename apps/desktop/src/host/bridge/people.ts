import type { SessionService } from "../host-context";
import type { SenderIdentity } from "./untrusted-prompt";

/**
 * Names of the people on the other side of grants and approvals, looked up once per launch with the
 * owner's key (`resolve-person`, which answers only for people connected to the owner). A failed
 * lookup leaves the name unknown (the principal id still identifies them) and is tried again later.
 */
export class PeopleDirectory {
  readonly #known = new Map<string, SenderIdentity>();

  constructor(private readonly session: SessionService) {}

  async identity(principalId: string): Promise<SenderIdentity> {
    const known = this.#known.get(principalId);
    if (known) return known;
    const unknown: SenderIdentity = { principalId, username: null, name: null };
    const client = this.session.client();
    if (!client) return unknown;
    try {
      const person = await client.call("resolvePerson", { query: { handle: principalId } });
      // The handle could also match a username that is all digits; only the same principal counts.
      if (person.principalId !== principalId) return unknown;
      const identity: SenderIdentity = { principalId, username: person.username, name: person.name };
      this.#known.set(principalId, identity);
      return identity;
    } catch {
      return unknown;
    }
  }

  /** The display name (or username) for lists, or null when unknown. */
  async displayName(principalId: string): Promise<string | null> {
    const identity = await this.identity(principalId);
    return identity.name ?? identity.username;
  }

  /** Another account signed in: what was known belongs to the previous one. */
  clear(): void {
    this.#known.clear();
  }
}
