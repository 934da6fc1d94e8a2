import type { UntrustedBlock } from "../../prompt/untrusted-blocks";

// The shapes the local policy and its flows (local-heartbeat.ts) share; apart so neither imports the other for them.

/** One tool call of this turn and what came back. */
export interface ToolExchange {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  readonly ok: boolean;
  /** The tool's JSON result, or its error text when `ok` is false. */
  readonly output: unknown;
}

/** What the `local` model knows when it decides its next step. */
export interface LocalTurn {
  /** The person's own words (outside every untrusted block), on one line. */
  readonly request: string;
  /** The same words with their line breaks. */
  readonly requestLines: string;
  /** True when the request itself came only from untrusted text: then only reading is allowed. */
  readonly readOnly: boolean;
  /** Content given with the request: attached notes, a contact's or guest's message. */
  readonly blocks: readonly UntrustedBlock[];
  readonly today: string;
  /**
   * The owner's name when someone else is asking (a contact's agent, a guest): answers then speak
   * of "Alex's notes", never of "your notes". Undefined when the owner asks.
   */
  readonly ownerName?: string;
  /** The tools this run was given; nothing else may be called. */
  readonly available: ReadonlySet<string>;
  /** The calls made since the request, oldest first. */
  readonly exchanges: readonly ToolExchange[];
}

export interface ToolCallPlan {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
}

export type LocalAction = { readonly kind: "call"; readonly calls: ToolCallPlan[] } | { readonly kind: "answer"; readonly text: string };
