import type { ToolApproval } from "@tandem/core";
import { z } from "zod";
import type { ApprovalItem } from "../../shared/desktop-api";
import type { HostContext } from "../host-context";
import { parseInput } from "../parse-input";
import { PendingCount } from "./pending-count";
import type { PeopleDirectory } from "./people";

/** The count is refreshed on every `tool.approval_requested` event; this poll is the fallback. */
const POLL_INTERVAL_MS = 5_000;

export const ResolveApprovalInput = z.object({
  approvalId: z.string().trim().min(1).max(200),
  decision: z.enum(["allow", "deny"]),
  scope: z.enum(["once", "session"]).optional(),
});

/**
 * The owner's side of tool approvals: what waits for them (on the server, so it survives restarts
 * and covers every bridge of theirs), their decisions, and the count the tray shows. Emits
 * `approval` once per newly seen pending approval, and calls `onCountChange` when the count moves.
 */
export class OwnerApprovals extends PendingCount {
  readonly #seen = new Set<string>();

  constructor(
    private readonly context: HostContext,
    private readonly people: PeopleDirectory,
    onCountChange: () => void,
  ) {
    super(POLL_INTERVAL_MS, onCountChange);
  }

  async list(): Promise<ApprovalItem[]> {
    const client = this.context.session.client();
    if (!client) return [];
    const { approvals } = await client.call("listToolApprovals", { query: { status: "pending", limit: 500 } });
    return Promise.all(approvals.map((approval) => this.#item(approval)));
  }

  async resolve(input: unknown): Promise<void> {
    const { approvalId, decision, scope } = parseInput("resolveApproval", ResolveApprovalInput, input);
    const client = this.context.session.client();
    if (!client) throw new Error("Sign in to decide on tool calls");
    try {
      await client.call("resolveToolApproval", { params: { id: approvalId }, body: { decision, scope: scope ?? "once" } });
    } finally {
      void this.refresh();
    }
  }

  /**
   * Denies what is still pending for a message whose runtime is gone (the app stopped mid-task), so
   * the owner is not asked about tool calls nobody waits for any more. Best effort: left alone,
   * they expire (as a deny) after 5 minutes anyway.
   */
  async withdraw(messageId: string): Promise<void> {
    const client = this.context.session.client();
    if (!client) return;
    try {
      const { approvals } = await client.call("listToolApprovals", { query: { status: "pending", limit: 500 } });
      for (const approval of approvals.filter((a) => a.messageId === messageId)) {
        await client.call("resolveToolApproval", { params: { id: approval.approvalId }, body: { decision: "deny", scope: "once" } });
      }
    } catch {
      // Offline, or decided meanwhile: either way nothing waits on it.
    }
    await this.refresh();
  }

  /** The pending approvals; emits `approval` for each one not seen before. */
  protected async readCount(): Promise<number | undefined> {
    let items: ApprovalItem[];
    try {
      items = await this.list();
    } catch {
      return undefined; // Offline: keep the last count; the next poll tries again.
    }
    for (const item of items) {
      if (this.#seen.has(item.approvalId)) continue;
      this.#seen.add(item.approvalId);
      this.context.events.emit("approval", item);
    }
    return items.length;
  }

  async #item(approval: ToolApproval): Promise<ApprovalItem> {
    return {
      approvalId: approval.approvalId,
      toolName: approval.toolName,
      toolInputSummary: approval.toolInputSummary,
      requesterPrincipalId: approval.requesterPrincipalId,
      requesterName: await this.people.displayName(approval.requesterPrincipalId),
      communicationSessionId: approval.communicationSessionId,
      createdAt: approval.createdAt,
      expiresAt: approval.expiresAt,
    };
  }
}
