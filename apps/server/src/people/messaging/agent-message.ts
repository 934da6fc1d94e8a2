import type { AgentMessageRequest } from "@tandem/core";
import type { z } from "zod";
import { type EscalationSource, pauseRun } from "../../agent/escalations/escalations";
import { askManagedAgent } from "../../agent/managed-agents/managed-agent-message";
import { agentByHandle, assertActive } from "../../agent/managed-agents/managed-agent-store";
import { agentInstructions, FROM_ANOTHER_AGENT } from "../../agent/prompt/instructions";
import { newBlockNonce, renderBlock } from "../../agent/prompt/untrusted-blocks";
import { type AgentEvent, type AgentRunResult, runAgent } from "../../agent/runner/agent-runner";
import { decisionsFrom, type ToolDecision } from "../../agent/tools/tool-decision";
import { meterRun, startRun } from "../../agent/usage/meters";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { ApiError, badRequest, forbidden, tooManyRequests } from "../../http/errors";
import type { SharedState } from "../../shared/shared-state";
import type { PersonRow } from "../network/network-people";
import { boundByLink, linkEnded, type UsablePermission, usableContactPermission, whileLinkLive } from "../share/link-bound";
import { liveLinkById } from "../share/share-links";
import { contactRunGrant } from "./contact-grant";
import { deliverAsRequest, mayWriteDirectly } from "./message-requests";
import { activeMembership, displayName, findPerson, groupNotFound, openPairConversation, postMessages } from "./shared-conversations";

export type AgentMessageBody = z.output<typeof AgentMessageRequest>;

/** The suffix that addresses a person's agent rather than the person (usernames never end in it). */
const AGENT_SUFFIX = "_coo";
const GROUP_PREFIX = "group:";

/** Where `to` points: a person's inbox, a person's agent, or a group. */
type Target = { mode: "human"; handle: string } | { mode: "agent"; handle: string } | { mode: "group"; groupId: number };

export function parseTarget(to: string): Target {
  const text = to.trim();
  if (text.toLowerCase().startsWith(GROUP_PREFIX)) {
    const id = text.slice(GROUP_PREFIX.length).trim();
    if (!/^[1-9][0-9]{0,15}$/.test(id)) throw badRequest("invalid_request", "to: group:<conversationId> needs a numeric id");
    return { mode: "group", groupId: Number(id) };
  }
  const handle = text.replace(/^@/, "").toLowerCase();
  if (handle.endsWith(AGENT_SUFFIX)) return { mode: "agent", handle: handle.slice(0, -AGENT_SUFFIX.length) };
  return { mode: "human", handle };
}

/** Agent RPCs one caller may have running at once, and one recipient's agent may be answering. */
const MAX_RPCS_PER_CALLER = 4;
const MAX_RPCS_PER_RECIPIENT = 8;

/**
 * Counts agent RPCs in flight over every instance (`app.shared`), so no caller can keep someone's
 * agent (and their model budget) busy with a flood of questions: past the limit, a 429 at once,
 * before any run.
 */
export class RpcSlots {
  constructor(private readonly shared: SharedState) {}

  /** Takes a slot for the pair, or throws 429; answers the function that gives it back. */
  async take(callerId: number, recipientId: number): Promise<() => void> {
    const caller = await this.shared.acquireSlot("rpc-callers", String(callerId), MAX_RPCS_PER_CALLER);
    if (!caller) throw tooManyRequests(5);
    const recipient = await this.shared.acquireSlot("rpc-recipients", String(recipientId), MAX_RPCS_PER_RECIPIENT);
    if (!recipient) {
      caller();
      throw tooManyRequests(5);
    }
    return () => {
      caller();
      recipient();
    };
  }
}

const DEFAULT_INTENT = { human: "inform", agent: "query", group: "inform" } as const;

async function personOrNotFound(app: AppContext, handle: string): Promise<PersonRow> {
  const person = handle === "" ? undefined : await findPerson(app.db, handle);
  if (!person) throw new ApiError(404, "user_not_found", `No user "${handle}"`);
  return person;
}

async function callerPerson(app: AppContext, principal: UserPrincipal): Promise<PersonRow> {
  const row = await app.db
    .selectFrom("users")
    .select(["id", "username", "name"])
    .where("id", "=", principal.userId)
    .executeTakeFirstOrThrow();
  return { id: Number(row.id), username: row.username, name: row.name };
}

/**
 * `POST /agent/message`. A message conveys intent, never authority: human mode only stores it for
 * the person to read (from someone not connected, held as a message request until they accept),
 * group mode only posts it, and agent mode runs the recipient's agent under a grant built from the
 * recipient's permission for the caller, with the caller's text inside an untrusted block. Nothing
 * in the message can widen what that run may reach.
 */
export async function sendAgentMessage(
  app: AppContext,
  principal: UserPrincipal,
  body: AgentMessageBody,
  signal: AbortSignal,
  slots: RpcSlots = new RpcSlots(app.shared),
  via: "agent_message" | "a2a" = "agent_message",
  /** The answer's text as the model writes it (A2A `message/stream`); a person's agent only, for now. */
  onText?: (delta: string) => void,
) {
  const started = performance.now();
  const target = parseTarget(body.to);
  const intent = body.intent ?? DEFAULT_INTENT[target.mode];
  if (body.clientMessageId !== undefined && target.mode !== "group") {
    throw badRequest("invalid_request", "clientMessageId: only group messages (to: group:<id>) take one");
  }
  const sender = await callerPerson(app, principal);
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;

  if (target.mode === "group") {
    const group = await app.db
      .selectFrom("agent_conversations")
      .select(["id", "title"])
      .where("id", "=", target.groupId)
      .where("kind", "=", "group")
      .executeTakeFirst();
    if (!group || !(await activeMembership(app.db, target.groupId, principal.userId))) throw groupNotFound(target.groupId);
    const [posted] = await postMessages(
      app,
      [
        {
          conversationId: target.groupId,
          author: sender,
          senderType: "agent",
          role: "user",
          content: body.message,
          intent,
          clientMessageId: body.clientMessageId,
        },
      ],
      { conversationType: "group", groupName: group.title },
    );
    const { message, duplicate } = posted as NonNullable<typeof posted>;
    return {
      success: true as const,
      mode: "group" as const,
      groupName: group.title,
      conversationId: target.groupId,
      messageId: message.id,
      delivered: true,
      response: null,
      intent,
      duplicate,
      elapsedMs: elapsed(),
    };
  }

  // A managed agent's handle (never a username: the two share one space) is asked in RPC mode.
  const managed = target.mode === "human" ? await agentByHandle(app.db, target.handle) : undefined;
  if (managed) {
    assertActive(managed);
    const release = await slots.take(sender.id, Number(managed.owner_id));
    try {
      const apiKeyId = principal.credential.kind === "api_key" ? principal.credential.id : null;
      return await askManagedAgent(app, sender, managed, body.message, body.intent ?? "query", via, apiKeyId, signal, elapsed, onText);
    } finally {
      release();
    }
  }

  const recipient = await personOrNotFound(app, target.handle);
  if (recipient.id === principal.userId) throw badRequest("cannot_message_self", "You cannot send an agent message to yourself");

  if (target.mode === "human") {
    const conversationId = await openPairConversation(app, sender, recipient);
    const post = (requestId?: number) =>
      postMessages(app, [{ conversationId, author: sender, senderType: "agent", role: "user", content: body.message, intent, requestId }], {
        conversationType: "shared_agent",
      }).then(() => undefined);
    // Someone not connected (nor a teammate) is delivered to all the same, held as a message request:
    // the answer is the same either way, so it tells the sender nothing of the recipient's choices.
    if (await mayWriteDirectly(app.db, principal.userId, recipient.id)) await post();
    else await deliverAsRequest(app, sender, recipient, conversationId, post);
    return {
      success: true as const,
      mode: "human" as const,
      intent,
      conversationId,
      recipientName: displayName(recipient),
      delivered: true,
      response: null,
      messageId: null,
      elapsedMs: elapsed(),
    };
  }

  // Agent RPC: the recipient's permission for the caller is the only authority the run gets (one
  // born of a share link only while the link is live, and within it).
  const permission = await usableContactPermission(app, recipient.id, principal.userId);
  if (!permission) {
    throw forbidden(
      "agent_permission_required",
      `${recipient.username} has not given your agent access; ask them first (POST /network/request with to: ${recipient.username}_coo)`,
    );
  }
  const release = await slots.take(sender.id, recipient.id);
  try {
    return await answerAsAgent(app, sender, recipient, body.message, intent, permission, signal, elapsed, onText);
  } finally {
    release();
  }
}

/** A contact permission's `toolPolicy` (`{tool: "allow" | "ask" | "deny"}`); anything malformed is left out. */
function contactToolPolicy(permissions: unknown): Record<string, ToolDecision> | null {
  const policy = (permissions as { toolPolicy?: unknown } | null)?.toolPolicy;
  if (typeof policy !== "object" || policy === null || Array.isArray(policy)) return null;
  const entries = Object.entries(policy).filter((entry): entry is [string, ToolDecision] =>
    ["allow", "ask", "deny"].includes(entry[1] as string),
  );
  return Object.fromEntries(entries);
}

/** What an agent RPC run needs to be rebuilt on any instance (a paused run's stored context). */
interface RpcContext {
  readonly senderId: number;
  readonly recipientId: number;
  readonly message: string;
  readonly intent: string;
}

/** The run's request (all but its messages) under the recipient's permission for the caller, as it stands now. */
async function rpcRequest(app: AppContext, sender: PersonRow, recipient: PersonRow, permission: UsablePermission) {
  const { link } = permission;
  const contactGrant = await contactRunGrant(app.db, recipient.id, { userId: sender.id, label: sender.username }, permission.permissions);
  const grant = link ? await boundByLink(app, link, contactGrant) : contactGrant;
  const model = app.models.resolve();
  const nonce = newBlockNonce();
  const ownerName = displayName(recipient);
  const instructions = [
    agentInstructions({ ownerName, askedBy: `${displayName(sender)}'s agent`, timezone: "UTC", now: app.clock.now(), blockNonce: nonce }),
    FROM_ANOTHER_AGENT,
  ].join("\n");
  return {
    app,
    model,
    grant,
    timezone: "UTC",
    instructions,
    blockNonce: nonce,
    onEvent: () => {},
    // A link revoked or expired mid-run: no tool call reaches anything after that.
    wrapTool: link ? whileLinkLive(app, Number(link.id)) : undefined,
    toolDecision: decisionsFrom(contactToolPolicy(permission.permissions)),
    // Each step recorded against the recipient's budgets; one used up stops the run at the next step.
    onStep: meterRun(app, { userId: recipient.id }, RPC_METER(model)).onStep,
  };
}

/** What an agent RPC run is metered as: the recipient's agent answering (source `agent_rpc`). */
const RPC_METER = (model: { provider: string; modelId: string }) => ({ source: "agent_rpc", purpose: "agent_message", model });

/** Stores the exchange (the caller's message and the agent's answer) in the pair's conversation. */
async function storeExchange(
  app: AppContext,
  sender: PersonRow,
  recipient: PersonRow,
  message: string,
  intent: string,
  result: AgentRunResult,
  modelId: string,
) {
  const conversationId = await openPairConversation(app, sender, recipient);
  await postMessages(
    app,
    [
      { conversationId, author: sender, senderType: "agent", role: "user", content: message, intent },
      {
        conversationId,
        author: recipient,
        senderType: "agent",
        role: "assistant",
        content: result.text,
        intent: "answer",
        toolsUsed: result.toolsUsed,
        model: modelId,
      },
    ],
    { conversationType: "shared_agent" },
  );
  return conversationId;
}

/**
 * Agent RPC as a source of escalations. A run paused on a tool the recipient's permission for the
 * caller says `ask` for answers the caller at once (`status: requires_action`, no answer); once the
 * recipient decides, the run resumes under the permission as it stands then (none left: it does
 * not resume) and its answer reaches the caller as a message in their shared conversation.
 */
export const agentRpcEscalations: EscalationSource<RpcContext> = {
  type: "agent_rpc",
  async prepare(app, context) {
    const { sender, recipient } = await rpcParties(app, context);
    const permission = await usableContactPermission(app, recipient.id, sender.id);
    if (!permission) throw new Error("the permission the paused agent RPC ran under is gone");
    return rpcRequest(app, sender, recipient, permission);
  },
  async finish(app, context, result, paused) {
    const { sender, recipient } = await rpcParties(app, context);
    const model = app.models.resolve();
    if (paused || result.status !== "completed") return;
    await storeExchange(app, sender, recipient, context.message, context.intent, result, model.modelId);
  },
  async abandon() {},
  async describe(app, context) {
    const sender = await findPerson(app.db, String(context.senderId));
    return `${sender?.username ?? "A contact"}'s agent`;
  },
};

async function rpcParties(app: AppContext, context: RpcContext) {
  const sender = await findPerson(app.db, String(context.senderId));
  const recipient = await findPerson(app.db, String(context.recipientId));
  if (!sender || !recipient) throw new Error("a party of the paused agent RPC is gone");
  return { sender, recipient };
}

/** Runs the recipient's agent on the caller's message under the grant of `permissions`, and stores the exchange. */
async function answerAsAgent(
  app: AppContext,
  sender: PersonRow,
  recipient: PersonRow,
  message: string,
  intent: string,
  permission: UsablePermission,
  signal: AbortSignal,
  elapsed: () => number,
  onText?: (delta: string) => void,
) {
  const { link } = permission;
  const request = await rpcRequest(app, sender, recipient, permission);
  const { model, blockNonce: nonce } = request;
  const ownerName = displayName(recipient);
  // The recipient's agent answers on the recipient's budgets, checked before the model is called.
  await startRun(app, { userId: recipient.id }, RPC_METER(model));
  const result = await runAgent({
    ...request,
    messages: [
      {
        role: "user",
        content: renderBlock(nonce, {
          source: "contact-message",
          attributes: { from: sender.username, intent },
          text: message,
        }),
      },
    ],
    signal,
    canPause: true,
    onEvent: (event: AgentEvent) => {
      if (event.type === "text-delta") onText?.(event.textDelta);
    },
  });
  if (result.status === "cancelled") throw new ApiError(499, "client_closed_request", "The request was cancelled");
  if (result.status === "timed_out") {
    throw new ApiError(504, "agent_timeout", `${recipient.username}'s agent did not answer in time; nothing was stored`);
  }
  if (result.status === "budget_exceeded") {
    throw new ApiError(
      402,
      "budget_exceeded",
      `${recipient.username}'s agent stopped: a budget of its owner was used up (quota spent); nothing was stored`,
    );
  }
  if (result.status === "failed") {
    throw new ApiError(502, "agent_unavailable", `${recipient.username}'s agent could not answer (${result.error ?? "the model failed"})`);
  }
  // Nor is an answer given or kept once the link it rested on has ended.
  if (link && !(await liveLinkById(app, Number(link.id)))) throw linkEnded();
  const base = {
    success: true as const,
    mode: "agent" as const,
    agentName: `${recipient.username}${AGENT_SUFFIX}`,
    ownerName,
    toolsUsed: result.toolsUsed,
    toolCount: result.toolsUsed.length,
    intent,
    messageId: null,
  };
  if (result.status === "requires_action") {
    const context: RpcContext = { senderId: sender.id, recipientId: recipient.id, message, intent };
    const paused = await pauseRun(app, {
      ownerId: recipient.id,
      source: agentRpcEscalations,
      sourceId: String(sender.id),
      context,
      result,
    });
    const conversationId = await openPairConversation(app, sender, recipient);
    return {
      ...base,
      status: "requires_action" as const,
      escalationIds: paused.escalations.map((escalation) => escalation.id),
      response: null,
      conversationId,
      elapsedMs: elapsed(),
    };
  }
  const conversationId = await storeExchange(app, sender, recipient, message, intent, result, model.modelId);
  return { ...base, response: result.text, conversationId, elapsedMs: elapsed() };
}
