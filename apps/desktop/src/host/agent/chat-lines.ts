import { ChatStreamLine } from "@tandem/core";
import type { ChatEvent } from "../../shared/desktop-api";

/** One line of the stream as the renderer gets it: the fields it reads, nothing of the usage accounting. */
export function parseChatLine(line: string): ChatEvent | null {
  if (line.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // Clients skip lines that are not JSON.
    return null;
  }
  const parsed = ChatStreamLine.safeParse(value);
  // A type this app does not know (a newer server's) is harmless: skipped.
  if (!parsed.success) return null;
  const event = parsed.data;
  if (event.type !== "completion") return event;
  // A run stopped by a budget is an incomplete answer here; the error line before it says why.
  const status = event.status === "budget_exceeded" ? "incomplete" : event.status;
  return { type: "completion", conversationId: event.conversationId, messageId: event.messageId, status };
}

/**
 * The chat stream is one JSON object per line in a plain body, and chunks end anywhere (inside a
 * line, inside a multi-byte character): bytes are decoded as a stream and lines handed on whole.
 */
export class ChatLineReader {
  readonly #decoder = new TextDecoder();
  #pending = "";

  /** The events whose lines `chunk` completes. */
  push(chunk: Uint8Array): ChatEvent[] {
    this.#pending += this.#decoder.decode(chunk, { stream: true });
    const lines = this.#pending.split("\n");
    this.#pending = lines.pop() ?? "";
    return lines.map(parseChatLine).filter((event) => event !== null);
  }

  /** The stream is over: a last line without its newline still counts. */
  end(): ChatEvent[] {
    const rest = this.#pending + this.#decoder.decode();
    this.#pending = "";
    const event = parseChatLine(rest);
    return event ? [event] : [];
  }
}
