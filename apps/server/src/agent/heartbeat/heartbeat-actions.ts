import type { AppContext } from "../../context";
import { ApiError } from "../../http/errors";
import type { AnyAgentTool } from "../tools/agent-tool";
import { findTool } from "../tools/registry";
import { capResult } from "../tools/result-cap";
import { memoryWritesSince, type NewAction, recordAction } from "./heartbeat-store";

/** Memory writes heartbeats may make per user: at most one an hour and four a day. */
export const MEMORY_WRITES_PER_HOUR = 1;
export const MEMORY_WRITES_PER_DAY = 4;
const HOUR_MS = 60 * 60_000;

export interface RunActions {
  /** Wraps each tool of the run (see `runAgent`'s `wrapTool`). */
  wrap(tool: AnyAgentTool): AnyAgentTool;
  /** Records a call to a tool the run does not have (the model asked for it by name). */
  refused(toolName: string, tier: string): Promise<void>;
  /** Records the message itself. */
  message(status: NewAction["status"], payload: unknown, result: unknown): Promise<void>;
  /** Actions recorded so far. */
  readonly count: number;
  /** Set when a tool failed unexpectedly (a server error, not a refusal the model can act on). */
  readonly toolFailure: string | undefined;
}

/**
 * Records every action of one run as it happens, and holds writes back where the run may not make
 * them: none in a dry run (recorded as skipped, with what would have been written), and memory
 * writes over the rate limit. A held-back write answers the model `{skipped: true, reason}`, so
 * it can say so.
 */
export function runActions(app: AppContext, run: { id: number; ownerId: number; dryRun: boolean }): RunActions {
  let count = 0;
  let toolFailure: string | undefined;
  const record = async (action: Omit<NewAction, "runId" | "ownerId" | "createdAt">) => {
    count++;
    await recordAction(app.db, { ...action, runId: run.id, ownerId: run.ownerId, createdAt: app.clock.iso() });
  };

  async function memoryLimit(): Promise<string | null> {
    const now = app.clock.nowMs();
    const lastHour = await memoryWritesSince(app.db, run.ownerId, new Date(now - HOUR_MS).toISOString());
    if (lastHour >= MEMORY_WRITES_PER_HOUR) return `rate limited: heartbeats write memory at most ${MEMORY_WRITES_PER_HOUR} time an hour`;
    const lastDay = await memoryWritesSince(app.db, run.ownerId, new Date(now - 24 * HOUR_MS).toISOString());
    if (lastDay >= MEMORY_WRITES_PER_DAY) return `rate limited: heartbeats write memory at most ${MEMORY_WRITES_PER_DAY} times a day`;
    return null;
  }

  async function heldBack(tool: AnyAgentTool): Promise<string | null> {
    if (tool.readWrite !== "write") return null;
    if (run.dryRun) return "dry run: nothing is written";
    return tool.name === "memory_write" ? memoryLimit() : null;
  }

  return {
    wrap: (tool) => ({
      ...tool,
      async execute(input, context) {
        const mode = tool.readWrite === "write" ? "action" : "message";
        const reason = await heldBack(tool);
        if (reason) {
          await record({ type: tool.name, mode, status: "skipped", payload: input, result: { reason } });
          return { skipped: true, reason };
        }
        try {
          const output = await tool.execute(input, context);
          await record({ type: tool.name, mode, status: "executed", payload: input, result: capResult(output) });
          return output;
        } catch (error) {
          const refusal = error instanceof ApiError && error.status < 500;
          if (!refusal) toolFailure ??= `The tool ${tool.name} failed.`;
          await record({
            type: tool.name,
            mode,
            status: "failed",
            payload: input,
            result: { error: refusal ? error.message : "the tool failed" },
          });
          throw error;
        }
      },
    }),
    refused: (toolName, tier) =>
      record({
        type: toolName,
        mode: findTool(toolName)?.readWrite === "read" ? "message" : "action",
        status: "skipped",
        payload: null,
        result: { reason: `${toolName} is not among the tools of a ${tier} heartbeat` },
      }),
    message: (status, payload, result) => record({ type: "send_message", mode: "message", status, payload, result }),
    get count() {
      return count;
    },
    get toolFailure() {
      return toolFailure;
    },
  };
}
