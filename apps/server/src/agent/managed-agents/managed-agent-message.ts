// `POST /agent/message {to: "<handle>"}` (and A2A) to a managed agent: RPC mode, as for
// `<username>_coo`, under the agent's grant intersected with what its owner granted the caller.

import type { AppContext } from "../../context";
import { ApiError, forbidden } from "../../http/errors";
import { displayName } from "../../people/messaging/shared-conversations";
import type { PersonRow } from "../../people/network/network-people";
import { linkEnded, usableContactPermission, whileLinkLive } from "../../people/share/link-bound";
import { liveLinkById } from "../../people/share/share-links";
import { agentGrant, intersectedGrant, type RunSource, runManagedAgent } from "./managed-agent-run";
import { type AgentRow, assertActive } from "./managed-agent-store";

/**
 * Whether `callerId` may ask the agent at all, before anything runs: its owner may; anyone else
 * needs an agent permission from the owner (a link-born one only while the link is live).
 * A paused agent is a 409 to everyone.
 */
export async function mayAskManagedAgent(app: AppContext, agent: AgentRow, callerId: number) {
  assertActive(agent);
  const ownerId = Number(agent.owner_id);
  if (callerId === ownerId) return { owner: true as const, permission: null };
  const permission = await usableContactPermission(app, ownerId, callerId);
  return permission ? { owner: false as const, permission } : null;
}

/** Runs the agent on the caller's message and answers as agent mode does; the run is recorded, no conversation is. */
export async function askManagedAgent(
  app: AppContext,
  sender: PersonRow,
  agent: AgentRow,
  message: string,
  intent: string,
  source: Extract<RunSource, "agent_message" | "a2a">,
  apiKeyId: string | null,
  signal: AbortSignal,
  elapsed: () => number,
  onText?: (delta: string) => void,
) {
  const access = await mayAskManagedAgent(app, agent, sender.id);
  if (!access) {
    throw forbidden(
      "agent_permission_required",
      `The agent ${agent.handle} is not open to you; ask its owner for agent access first (POST /network/request)`,
    );
  }
  const link = access.permission?.link ?? null;
  const grant = access.owner
    ? await agentGrant(app.db, agent, { kind: "owner", apiKeyId })
    : await intersectedGrant(app, agent, sender, access.permission);
  const outcome = await runManagedAgent(app, agent, {
    source,
    asker: access.owner ? null : sender,
    // Usage and the run are the owner's records: another person's key id stays out of them.
    apiKeyId: access.owner ? apiKeyId : null,
    grant,
    input: message,
    signal,
    wrapTool: link ? whileLinkLive(app, Number(link.id)) : undefined,
    // A2A's message/stream passes the answer on as it is written.
    onEvent: onText ? (event) => event.type === "text-delta" && onText(event.textDelta) : undefined,
  });
  const { result } = outcome;
  if (result.status === "cancelled") throw new ApiError(499, "client_closed_request", "The request was cancelled");
  if (result.status === "timed_out") throw new ApiError(504, "agent_timeout", `The agent ${agent.handle} did not answer in time`);
  if (result.status === "budget_exceeded") {
    throw new ApiError(402, "budget_exceeded", `The agent ${agent.handle} stopped: a budget of its owner was used up (quota spent)`);
  }
  if (result.status === "failed") {
    throw new ApiError(502, "agent_unavailable", `The agent ${agent.handle} could not answer (${result.error ?? "the model failed"})`);
  }
  if (link && !(await liveLinkById(app, Number(link.id)))) throw linkEnded();
  const owner = await app.db
    .selectFrom("users")
    .select(["id", "username", "name"])
    .where("id", "=", Number(agent.owner_id))
    .executeTakeFirstOrThrow();
  const answer = {
    success: true as const,
    mode: "agent" as const,
    agentName: agent.handle,
    ownerName: displayName({ id: Number(owner.id), username: owner.username, name: owner.name }),
    response: result.text,
    toolsUsed: result.toolsUsed,
    toolCount: result.toolsUsed.length,
    intent,
    // A managed agent's exchanges are kept as its runs, not in a conversation.
    conversationId: 0,
    runId: Number(outcome.run.id),
    messageId: null,
    elapsedMs: elapsed(),
  };
  // Paused on a tool its owner must decide: no answer yet; the run's record gets it once resumed.
  if (result.status === "requires_action") {
    return { ...answer, response: null, status: "requires_action" as const, escalationIds: [...(outcome.escalationIds ?? [])] };
  }
  return answer;
}
