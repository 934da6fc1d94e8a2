import type { ChatEnding, ChatEvent, ChatMessageItem } from "../../shared/desktop-api";
import type { ToolState } from "./tool-names";

export interface ToolChip {
  readonly id: string;
  readonly name: string;
  readonly state: ToolState;
}

/** A message sent from this window and its reply as it streams in. */
export interface LiveTurn {
  readonly key: string;
  readonly userText: string;
  readonly answer: string;
  readonly tools: readonly ToolChip[];
  /** `sending` until the server accepted the message; `streaming` while the reply comes; then `ended`. */
  readonly phase: "sending" | "streaming" | "ended";
  readonly ending: ChatEnding | null;
  /** While the run is silent (a long tool, a slow model): how long it has been working. */
  readonly workingMs: number | null;
}

export type Entry = { readonly kind: "saved"; readonly message: ChatMessageItem } | { readonly kind: "live"; readonly turn: LiveTurn };

/** A live turn after `events`: text appended, tool chips started and settled. */
export function applyChatEvents(turn: LiveTurn, events: readonly ChatEvent[]): LiveTurn {
  let { answer, tools, workingMs } = turn;
  for (const event of events) {
    if (event.type === "text-delta") {
      answer += event.textDelta;
      workingMs = null;
    } else if (event.type === "tool-call-start") {
      tools = [...tools, { id: event.toolCallId, name: event.toolName, state: "running" }];
      workingMs = null;
    } else if (event.type === "tool-call-end") {
      const state = event.ok ? "done" : "failed";
      const known = tools.some((tool) => tool.id === event.toolCallId);
      tools = known
        ? tools.map((tool) => (tool.id === event.toolCallId ? { ...tool, state } : tool))
        : [...tools, { id: event.toolCallId, name: event.toolName, state }];
    } else if (event.type === "pipeline-progress") {
      workingMs = event.elapsedMs;
    }
  }
  return { ...turn, answer, tools, workingMs, phase: turn.phase === "sending" ? "streaming" : turn.phase };
}

/** The turn once its run is over; chips still running then never got their answer. */
export function endTurn(turn: LiveTurn, ending: ChatEnding): LiveTurn {
  const tools = turn.tools.map((tool) => (tool.state === "running" ? { ...tool, state: "stopped" as const } : tool));
  return { ...turn, tools, phase: "ended", ending, workingMs: null };
}

/** The conversation the stream started (or continued), if it said so yet. */
export function startedConversation(events: readonly ChatEvent[]): number | null {
  const start = events.find((event) => event.type === "conversation-start");
  return start?.type === "conversation-start" ? start.conversationId : null;
}
