import type { ToolApproval } from "@tandem/core";
import type { BridgeActivityItem, BridgeTaskOutcome } from "../../shared/desktop-api";
import type { SessionService } from "../host-context";
import type { GuestAnswerEntry, GuestAnswerLog } from "./guest-answer-log";
import type { PeopleDirectory } from "./people";
import type { BridgeSpool, SpoolEntry } from "./spool";
import { requestText } from "./untrusted-prompt";

/** Tasks shown in the log. */
const SHOWN = 50;
/** Tool approvals read to match them to those tasks (the route's maximum). */
const APPROVALS_READ = 500;
const REQUEST_EXCERPT = 160;

/** A spool entry's end, as the owner reads it; the spool's `reason` holds the why. */
function outcomeOf(entry: SpoolEntry): { outcome: BridgeTaskOutcome; detail: string | null } {
  const reason = entry.reason;
  switch (entry.state) {
    case "received":
    case "validated":
      return { outcome: "waiting", detail: null };
    case "running":
      return { outcome: "running", detail: null };
    case "done":
      if (reason === "reply_received") return { outcome: "reply_received", detail: null };
      return { outcome: "answered", detail: reason };
    case "rejected":
      return { outcome: "rejected", detail: reason };
    case "failed":
      if (reason?.startsWith("interrupted")) return { outcome: "interrupted", detail: reason.replace(/^interrupted: /, "") };
      return { outcome: "runtime_error", detail: reason?.replace(/^runtime: /, "") ?? null };
  }
}

/** A guest's message as the owner reads it: how it ended, in words. */
function guestOutcomeOf(entry: GuestAnswerEntry): { outcome: BridgeTaskOutcome; detail: string | null } {
  switch (entry.state) {
    case "running":
      return { outcome: "running", detail: null };
    case "answered":
      return { outcome: "answered", detail: null };
    case "not_delivered":
      return { outcome: "not_delivered", detail: entry.reason };
    case "failed":
      return { outcome: "runtime_error", detail: entry.reason };
    case "interrupted":
      return { outcome: "interrupted", detail: entry.reason };
  }
}

function guestItem(entry: GuestAnswerEntry): BridgeActivityItem {
  return {
    messageId: `guest-${entry.messageId}`,
    source: "guest",
    receivedAt: entry.receivedAt,
    updatedAt: entry.updatedAt,
    fromPrincipalId: null,
    fromName: entry.guestName,
    linkLabel: entry.linkLabel,
    request: excerpt(entry.question),
    ...guestOutcomeOf(entry),
    // Refused here, unasked: a guest's run has no tools.
    toolCalls: entry.deniedTools.map((toolName) => ({ toolName, status: "denied" as const })),
  };
}

function excerpt(payload: unknown): string {
  const flat = requestText(payload).replace(/\s+/g, " ").trim();
  return flat.length > REQUEST_EXCERPT ? `${flat.slice(0, REQUEST_EXCERPT)}…` : flat;
}

/**
 * The owner's activity log: the latest tasks in the spool (this computer's durable record of what
 * arrived and how it ended) with the sender's name, and the tool calls the server recorded for
 * each (allowed, denied, allowed by a policy, expired), merged with the guests of share links this
 * computer answered (from the guest answer log; their tool calls were all refused here). Without
 * the server the tool calls are left out; the tasks are still shown.
 */
export async function bridgeActivity(
  spool: BridgeSpool,
  guestLog: GuestAnswerLog,
  session: SessionService,
  people: PeopleDirectory,
): Promise<BridgeActivityItem[]> {
  const entries = await spool.recent(SHOWN);
  const guests = (await guestLog.recent(SHOWN)).map(guestItem);
  const toolCalls = new Map<string, ToolApproval[]>();
  const client = session.client();
  if (client && entries.length > 0) {
    try {
      const { approvals } = await client.call("listToolApprovals", { query: { limit: APPROVALS_READ } });
      // Newest first from the server; a task lists its calls in the order they were asked.
      for (const approval of [...approvals].reverse()) {
        if (!approval.messageId) continue;
        toolCalls.set(approval.messageId, [...(toolCalls.get(approval.messageId) ?? []), approval]);
      }
    } catch {
      // Offline, or a key without the scope: the tasks alone still say what happened.
    }
  }
  const tasks = await Promise.all(
    entries.map(
      async (entry): Promise<BridgeActivityItem> => ({
        messageId: entry.messageId,
        source: "grant",
        receivedAt: entry.receivedAt,
        updatedAt: entry.updatedAt,
        fromPrincipalId: entry.envelope.senderPrincipalId,
        fromName: await people.displayName(entry.envelope.senderPrincipalId),
        linkLabel: null,
        request: excerpt(entry.envelope.payload),
        ...outcomeOf(entry),
        toolCalls: (toolCalls.get(entry.messageId) ?? []).map((call) => ({ toolName: call.toolName, status: call.status })),
      }),
    ),
  );
  // One log, newest first: ISO times of this computer's clock sort as text.
  return [...tasks, ...guests].sort((a, b) => b.receivedAt.localeCompare(a.receivedAt)).slice(0, SHOWN);
}
