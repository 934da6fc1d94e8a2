import { type ContactPermissions, TandemApiError } from "@tandem/core";
import { z } from "zod";
import type { AccessLevel, AccessRequestItem, AgentAccessChoice } from "../../shared/desktop-api";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";
import type { OwnerGrants } from "./owner-grants";
import { PendingCount } from "./pending-count";

/** Requests wait for days, not seconds: a slow poll is enough, and every answer refreshes at once. */
const POLL_INTERVAL_MS = 10_000;

const Level = z.enum(["none", "read", "write"]);
const AnswerInput = z.object({
  requestId: z.number().int().positive(),
  action: z.enum(["accept", "decline"]),
  access: z.object({ notes: Level, todos: Level }).optional(),
});

/**
 * The owner's choice, in the server's terms: what the requester's agent may reach of the owner's
 * (capability → level, docs/delegation/network.md). "none" is left out; an empty object still
 * gives access (grants become possible) with nothing of the owner's to reach.
 */
export function permissionsFor(access: AgentAccessChoice): ContactPermissions {
  const permissions: ContactPermissions = {};
  const levels: [keyof AgentAccessChoice, string][] = [
    ["notes", "notesAccess"],
    ["todos", "todosAccess"],
  ];
  for (const [area, capability] of levels) {
    const level: AccessLevel = access[area];
    if (level !== "none") permissions[capability] = { scope: "all", access: level };
  }
  return permissions;
}

/**
 * Requests waiting for the owner that are not tool calls: agent-access requests (the handshake)
 * and grant requests. Lists and answers agent-access requests with the owner's key, and keeps the
 * count of both for the Approvals badge (`onCountChange` when it moves).
 */
export class OwnerRequests extends PendingCount {
  constructor(
    private readonly session: SessionService,
    private readonly grants: OwnerGrants,
    onCountChange: () => void,
  ) {
    super(POLL_INTERVAL_MS, onCountChange);
  }

  async list(): Promise<AccessRequestItem[]> {
    const client = this.session.client();
    if (!client) return [];
    const { incoming } = await client.call("networkListRequests").catch((error: unknown) => {
      // Sign-in asks only for the notes and todos scopes: say what is missing rather than "403".
      if (error instanceof TandemApiError && error.body.error === "insufficient_scope") {
        throw new Error("Your API key cannot see agent-access requests (it lacks os.network:read). Sign in with a key that has it.");
      }
      throw error;
    });
    return incoming
      .filter((request) => request.type === "agent")
      .map((request) => ({
        requestId: request.requestId,
        fromUserId: request.from.userId,
        fromUsername: request.from.username,
        fromName: request.from.name,
        createdAt: request.createdAt,
      }));
  }

  async answer(input: unknown): Promise<void> {
    const { requestId, action, access } = parseInput("answerAccessRequest", AnswerInput, input);
    const client = this.session.client();
    if (!client) throw new Error("Sign in to answer requests");
    try {
      await client.call("networkAccept", {
        body: { requestId, type: "agent", action, ...(action === "accept" && access ? { permissions: permissionsFor(access) } : {}) },
      });
    } finally {
      void this.refresh();
    }
  }

  /** Both kinds of request. */
  protected async readCount(): Promise<number | undefined> {
    try {
      const [access, grants] = await Promise.all([this.list(), this.grants.list()]);
      return access.length + grants.filter((grant) => grant.direction === "incoming" && grant.status === "pending").length;
    } catch {
      return undefined; // Offline, or a key without network scope: keep the last count.
    }
  }
}
