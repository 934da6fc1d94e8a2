import type { GrantRow } from "@tandem/core";
import { z } from "zod";
import type { GrantItem } from "../../shared/desktop-api";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";
import type { PeopleDirectory } from "./people";

export const GrantIdInput = z.object({ grantId: z.string().trim().min(1).max(200) });

/** Grants where the owner is requester or recipient, and the owner's decisions on them (their key). */
export class OwnerGrants {
  constructor(
    private readonly session: SessionService,
    private readonly people: PeopleDirectory,
  ) {}

  async list(): Promise<GrantItem[]> {
    const client = this.session.client();
    if (!client) return [];
    const { grants } = await client.call("listGrants");
    return Promise.all(grants.map((row) => this.item(row)));
  }

  async accept(input: unknown): Promise<void> {
    const { grantId } = parseInput("acceptGrant", GrantIdInput, input);
    await this.#client().call("acceptGrant", { params: { id: grantId } });
  }

  async decline(input: unknown): Promise<void> {
    const { grantId } = parseInput("declineGrant", GrantIdInput, input);
    await this.#client().call("declineGrant", { params: { id: grantId } });
  }

  async revoke(input: unknown): Promise<void> {
    const { grantId } = parseInput("revokeGrant", GrantIdInput, input);
    await this.#client().call("revokeGrant", { params: { id: grantId } });
  }

  /** A grant row as the owner sees it: incoming when they are its recipient. */
  async item(row: GrantRow): Promise<GrantItem> {
    const userId = this.session.credentials()?.userId;
    const incoming = row.recipientPrincipalId === String(userId);
    const peerPrincipalId = incoming ? row.requesterPrincipalId : row.recipientPrincipalId;
    return {
      grantId: row.communicationSessionId,
      direction: incoming ? "incoming" : "outgoing",
      peerPrincipalId,
      peerName: await this.people.displayName(peerPrincipalId),
      status: row.status,
      requestedAt: row.requestedAt,
      grantExpiresAt: row.grantExpiresAt,
    };
  }

  #client() {
    const client = this.session.client();
    if (!client) throw new Error("Sign in to manage grants");
    return client;
  }
}
