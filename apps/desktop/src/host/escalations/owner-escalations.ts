import { z } from "zod";
import type { EscalationItem, EscalationList } from "../../shared/desktop-api";
import { PendingCount } from "../bridge/pending-count";
import { connectionsCall, isObjectMissing, isRouteMissing, lacksScope, readAnswer } from "../connections/connections-call";
import type { HostContext } from "../host-context";
import type { UserStreamEvent } from "../inbox/user-stream";
import { parseInput } from "../parse-input";

/** The count is read again on each `escalation.*` event of the user stream; this poll is the fallback. */
const POLL_INTERVAL_MS = 15_000;
/** More than this many waiting at once is shown as this many (the server's largest page). */
const LIST_LIMIT = 200;

/** Said instead of the list when the desktop's key lacks the `os.tools` scopes escalations sit under. */
export const ESCALATIONS_NOT_ALLOWED =
  "This desktop's key cannot see the agent actions waiting for you: it lacks the os.tools:read and os.tools:write permissions. " +
  "A desktop signed in with a pairing code never has them (they also manage webhooks and tool servers). To decide on them here, sign out and sign in with an API key that has them.";

export const ESCALATION_GONE = "This approval is no longer there.";

export const ESCALATIONS_OFFLINE =
  "Can't reach the server right now. Approvals are decided on the server; try again once you are back online.";

const SOURCE_WORDS: Record<string, string> = {
  heartbeat: "Your heartbeat",
  managed_agent: "One of your agents",
  agent_rpc: "Your agent, for a contact",
};

const EscalationShape = z.object({
  id: z.string(),
  source: z.object({ type: z.string(), id: z.string() }),
  runId: z.string().nullable().optional().default(null),
  toolName: z.string(),
  summary: z.string(),
  consequence: z.string().optional().default(""),
  status: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
});
const EscalationListShape = z.object({ escalations: z.array(EscalationShape) });

const ResolveInput = z.object({ id: z.string().trim().min(1).max(100), decision: z.enum(["continue", "stop"]) });

function escalationItem(escalation: z.output<typeof EscalationShape>): EscalationItem {
  return {
    id: escalation.id,
    sourceType: escalation.source.type,
    sourceWords: SOURCE_WORDS[escalation.source.type] ?? "An agent",
    toolName: escalation.toolName,
    summary: escalation.summary,
    consequence: escalation.consequence,
    createdAt: escalation.createdAt,
    expiresAt: escalation.expiresAt,
  };
}

/**
 * What the owner's agents wait for (escalations, docs/escalations.md): runs paused on a tool whose
 * policy is `ask` (heartbeat, managed agents, agent RPC), listed with Continue / Stop. The bridge's
 * pending tool approvals are escalations too, but the Approvals view shows them as tool calls (with
 * their allow-for-the-session choice), so they are left out here and counted once. The count follows
 * the user stream's `escalation.requested` / `escalation.resolved` (and a poll); each one seen for the
 * first time is emitted as `escalation` (Electron's main shows a notification).
 */
export class OwnerEscalations extends PendingCount {
  #seen = new Set<string>();
  readonly #unsubscribe: () => void;
  readonly #onEvent = (event: UserStreamEvent) => {
    if (event.type === "escalation.requested" || event.type === "escalation.resolved") void this.refresh();
  };

  constructor(
    private readonly context: HostContext,
    onCountChange: () => void,
  ) {
    super(POLL_INTERVAL_MS, onCountChange);
    context.events.on("user-event", this.#onEvent);
    const off = context.session.onChange(() => {
      this.#seen = new Set();
      void this.refresh();
    });
    this.#unsubscribe = () => {
      off();
      context.events.off("user-event", this.#onEvent);
    };
  }

  close(): void {
    this.#unsubscribe();
    this.stop();
  }

  async list(): Promise<EscalationList> {
    const client = this.context.session.client();
    if (!client) return { supported: true, escalations: [] };
    try {
      const answer = await connectionsCall(
        () => client.call("listEscalations", { query: { status: "pending", limit: LIST_LIMIT } }),
        ESCALATIONS_OFFLINE,
      );
      const escalations = readAnswer(EscalationListShape, answer, "the approvals")
        .escalations.filter((escalation) => escalation.source.type !== "bridge" && escalation.status === "pending")
        .map(escalationItem);
      return { supported: true, escalations };
    } catch (error) {
      if (isRouteMissing(error)) return { supported: false, escalations: [] };
      if (lacksScope(error)) return { supported: true, escalations: [], notAllowed: ESCALATIONS_NOT_ALLOWED };
      throw error;
    }
  }

  async resolve(input: unknown): Promise<void> {
    const { id, decision } = parseInput("resolveEscalation", ResolveInput, input);
    const client = this.context.session.client();
    if (!client) throw new Error("Sign in to decide on what your agents wait for");
    try {
      await connectionsCall(() => client.call("resolveEscalation", { params: { id }, body: { decision } }), ESCALATIONS_OFFLINE);
    } catch (error) {
      const code = (error as { cause?: { body?: { error?: unknown } } }).cause?.body?.error;
      if (code === "already_resolved") throw new Error("This was already decided (on another device, say).", { cause: error });
      if (code === "expired") throw new Error("This waited too long and expired: it counts as stopped.", { cause: error });
      if (isObjectMissing(error)) throw new Error(ESCALATION_GONE, { cause: error });
      throw error;
    } finally {
      void this.refresh();
    }
  }

  protected async readCount(): Promise<number | undefined> {
    let list: EscalationList;
    try {
      list = await this.list();
    } catch {
      return undefined; // Offline: keep the last count; the next poll tries again.
    }
    for (const item of list.escalations) {
      if (this.#seen.has(item.id)) continue;
      this.#seen.add(item.id);
      this.context.events.emit("escalation", item);
    }
    return list.escalations.length;
  }
}
