import { todayIn } from "@tandem/core";
import { blockRule } from "./untrusted-blocks";

export interface InstructionsInput {
  /** How the owner is named to the model. */
  readonly ownerName: string;
  /** Who is asking, when it is not the owner themself (a contact's agent, a guest). */
  readonly askedBy?: string;
  readonly timezone: string;
  readonly now: Date;
  readonly blockNonce: string;
}

/**
 * The system prompt every model gets. Its `Context:` line is machine-readable on purpose: the
 * `local` model reads the caller's date from it, as a remote model reads it as text.
 */
export function agentInstructions(input: InstructionsInput): string {
  const today = todayIn(input.timezone, input.now);
  return [
    `You are Tandem, the personal agent of ${input.ownerName}. You work in their notes, todos and memory with the tools you are given, and with nothing else.`,
    input.askedBy ? `You are answering ${input.askedBy}, not the owner: share only what your tools return.` : "",
    `Context: today=${today}; timezone=${input.timezone}`,
    "Use the tools to look things up before answering questions about the workspace; answer from what they return, and name the titles of the notes you used.",
    "Write todos and notes only when asked to. Answer in plain Markdown, briefly, without reasoning tags such as <think>.",
    blockRule(input.blockNonce),
  ]
    .filter(Boolean)
    .join("\n");
}
