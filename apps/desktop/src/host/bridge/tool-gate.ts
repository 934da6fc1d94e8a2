import type { TandemClient } from "@tandem/core";
import type { ToolDecision, ToolRequest } from "./runtime/runtime-adapter";
import { delay } from "./wire-client";

/** Bridges poll a pending approval every 2 s and give up after 5 minutes (approvals.md). */
const POLL_INTERVAL_MS = 2_000;
const MAX_WAIT_MS = 5 * 60_000;
/** Decisions that arrived before anyone waited for them; a few are enough, old ones are dropped. */
const EARLY_DECISIONS_KEPT = 200;

export interface ToolCallContext {
  readonly communicationSessionId: string;
  readonly sessionHandle: string | null;
  readonly messageId: string;
}

/**
 * The bridge's side of tool approvals: every tool call a runtime wants while serving a grant is
 * asked of the server, which answers at once from the owner's policies (`auto_allow`) or leaves it
 * `pending` for the owner. A pending call waits for `tool.approval_decision` on the realtime
 * stream, polling as a fallback. Deny is the default: errors, timeouts and stops all deny.
 */
export class ToolGate {
  readonly #waiters = new Map<string, (decision: ToolDecision) => void>();
  readonly #early = new Map<string, ToolDecision>();

  constructor(private readonly device: TandemClient) {}

  async request(call: ToolCallContext, tool: ToolRequest, signal: AbortSignal): Promise<ToolDecision> {
    let asked: { approvalId: string; status: string; expiresAt: string };
    try {
      asked = await this.device.call("requestToolApproval", {
        body: {
          communicationSessionId: call.communicationSessionId,
          sessionHandle: call.sessionHandle ?? undefined,
          messageId: call.messageId,
          toolName: tool.toolName,
          toolInputSummary: tool.toolInputSummary,
        },
      });
    } catch {
      // Not retried: a second POST would be a second approval for the owner. Failing closed is safe.
      return "deny";
    }
    if (asked.status === "auto_allow") return "allow";
    if (asked.status !== "pending") return "deny";
    return this.#wait(asked.approvalId, Date.parse(asked.expiresAt), signal);
  }

  /** A `tool.approval_decision` event from the stream. */
  onDecision(data: Record<string, unknown>): void {
    if (typeof data.approvalId !== "string") return;
    const decision: ToolDecision = data.decision === "allow" ? "allow" : "deny";
    const waiter = this.#waiters.get(data.approvalId);
    if (waiter) {
      waiter(decision);
      return;
    }
    this.#early.set(data.approvalId, decision);
    if (this.#early.size > EARLY_DECISIONS_KEPT) this.#early.delete(this.#early.keys().next().value as string);
  }

  #wait(approvalId: string, expiresAt: number, signal: AbortSignal): Promise<ToolDecision> {
    const early = this.#early.get(approvalId);
    if (early) {
      this.#early.delete(approvalId);
      return Promise.resolve(early);
    }
    const deadline = Math.min(Number.isFinite(expiresAt) ? expiresAt + 5_000 : Number.POSITIVE_INFINITY, Date.now() + MAX_WAIT_MS);
    return new Promise<ToolDecision>((resolve) => {
      const stop = new AbortController();
      const finish = (decision: ToolDecision) => {
        if (stop.signal.aborted) return;
        stop.abort();
        this.#waiters.delete(approvalId);
        signal.removeEventListener("abort", onAbort);
        resolve(decision);
      };
      const onAbort = () => finish("deny");
      this.#waiters.set(approvalId, finish);
      signal.addEventListener("abort", onAbort, { once: true });
      if (signal.aborted) return onAbort();
      void (async () => {
        while (!stop.signal.aborted) {
          const remaining = deadline - Date.now();
          if (remaining <= 0) return finish("deny");
          await delay(Math.min(POLL_INTERVAL_MS, remaining), stop.signal);
          if (stop.signal.aborted) return;
          try {
            const approval = await this.device.call("getToolApproval", { params: { id: approvalId } });
            if (approval.status === "allowed" || approval.status === "auto_allow") finish(approval.decision === "allow" ? "allow" : "deny");
            else if (approval.status !== "pending") finish("deny");
          } catch {
            // The poll is only the fallback; the next one, or the deadline, decides.
          }
        }
      })();
    });
  }
}
