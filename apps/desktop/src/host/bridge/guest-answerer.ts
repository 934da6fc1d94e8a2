import type { TandemClient } from "@tandem/core";
import type { GuestAnswerLog, GuestAnswerState } from "./guest-answer-log";
import type { RuntimeAdapter, ToolDecision } from "./runtime/runtime-adapter";
import { type GuestMessage, wrapGuestMessage } from "./untrusted-prompt";
import { delay, describeError, isApiError, retryTransport } from "./wire-client";

/** The server has no stream event for guest messages: they are polled, this often by default. */
export const DEFAULT_GUEST_POLL_MS = 2_000;
/** Messages read per poll (oldest first); the server's default. */
const POLL_LIMIT = 20;
/** The reply route takes at most 20,000 characters. */
const MAX_ANSWER_CHARS = 20_000;
const CUT_NOTE = "\n\n[answer cut to fit]";

export interface GuestAnswererOptions {
  /** The bridge's own client (device token): the routes answer only the owner's live links. */
  readonly device: TandemClient;
  /** Names the server in the log, so messages of two servers never collide. */
  readonly serverUrl: string;
  readonly runtime: RuntimeAdapter;
  readonly log: GuestAnswerLog;
  /** An empty directory only guest runs use. */
  readonly workDir: string;
  readonly pollMs: number;
  /** A guest message was taken or finished (the activity log, the status). */
  readonly onActivity: () => void;
}

/** Why a run ended early when the answerer stopped: it cannot tell which of the two it was. */
const STOPPED = "stopped before it finished: the app quit, or answering guests was turned off";

type Finish = { state: Exclude<GuestAnswerState, "running">; reason: string | null };

/**
 * Answers guests of the owner's share links from this computer's coding agent, while the owner
 * has turned that on: polls `GET /local-agent/guest-messages`, runs each message once (the log
 * row is written before the run starts) as untrusted content with NO tools (every call the
 * runtime asks for is refused here, before anyone is asked: a link gives a guest nothing on
 * this computer), and posts the answer to `/local-agent/guest-messages/reply`. A message the
 * server stops listing while it runs (the wait ran out, the link was revoked or expired) stops
 * the run; a refused reply (404, 409) is logged, not retried.
 */
export class GuestAnswerer {
  readonly #controller = new AbortController();
  readonly #queue: GuestMessage[] = [];
  #current: { messageId: number; stop: AbortController; why: string | null } | null = null;
  #working: Promise<void> | undefined;
  #problem: string | null = null;
  readonly #polling: Promise<void>;

  constructor(private readonly options: GuestAnswererOptions) {
    this.#polling = this.#poll();
  }

  /** Why guests are not being read right now (the server cannot be reached), for the owner; null when fine. */
  get problem(): string | null {
    return this.#problem;
  }

  /** Stops polling; a run in progress ends as interrupted (the server's agent answers that guest). */
  async stop(): Promise<void> {
    this.#controller.abort();
    this.#current?.stop.abort();
    await this.#polling;
    await this.#working;
  }

  async #poll(): Promise<void> {
    const signal = this.#controller.signal;
    while (!signal.aborted) {
      try {
        const { messages } = await this.options.device.call("listGuestMessages", { query: { limit: POLL_LIMIT } });
        this.#setProblem(null);
        this.#follow(messages);
      } catch (error) {
        if (signal.aborted) return;
        // 401 means the pairing is gone: the endpoint runner notices and stops this answerer.
        this.#setProblem(`Cannot read guest messages: ${describeError(error)}`);
      }
      await delay(this.options.pollMs, signal);
    }
  }

  #setProblem(problem: string | null): void {
    if (problem === this.#problem) return;
    this.#problem = problem;
    this.options.onActivity();
  }

  /** What the server lists now: new messages are queued; a running one no longer listed stops. */
  #follow(messages: readonly GuestMessage[]): void {
    const listed = new Set(messages.map((m) => m.messageId));
    const current = this.#current;
    if (current && !listed.has(current.messageId) && !current.stop.signal.aborted) {
      current.why = "the guest stopped waiting (the wait ran out, or the link was revoked or expired) before the answer was ready";
      current.stop.abort();
    }
    for (const message of messages) {
      if (message.messageId === current?.messageId || this.#queue.some((q) => q.messageId === message.messageId)) continue;
      this.#queue.push(message);
    }
    // Queued messages the server stopped listing are nobody's to answer any more.
    for (let i = this.#queue.length - 1; i >= 0; i--) if (!listed.has(this.#queue[i]?.messageId ?? -1)) this.#queue.splice(i, 1);
    this.#working ??= this.#work().finally(() => {
      this.#working = undefined;
    });
  }

  /** One message at a time, oldest first. */
  async #work(): Promise<void> {
    for (let next = this.#queue.shift(); next && !this.#controller.signal.aborted; next = this.#queue.shift()) {
      try {
        await this.#answer(next);
      } catch {
        // The local store is closing with the host; nothing was sent for this message.
      }
    }
  }

  async #answer(message: GuestMessage): Promise<void> {
    const { log, serverUrl } = this.options;
    const taken = await log.take({
      serverUrl,
      messageId: message.messageId,
      linkLabel: message.linkLabel,
      guestName: message.guestName,
      question: message.content,
    });
    if (!taken) return; // Taken before (by this launch or an earlier one): never a second answer.
    this.options.onActivity();
    const denied: string[] = [];
    const outcome = await this.#run(message, denied);
    await log.finish(serverUrl, message.messageId, outcome.state, outcome.reason, denied);
    this.options.onActivity();
  }

  async #run(message: GuestMessage, denied: string[]): Promise<Finish> {
    const stop = new AbortController();
    const onStop = () => stop.abort();
    this.#controller.signal.addEventListener("abort", onStop, { once: true });
    const current = { messageId: message.messageId, stop, why: null as string | null };
    this.#current = current;
    let result: { text: string; isError: boolean } | null = null;
    try {
      for await (const event of this.options.runtime.run({
        id: `guest-${message.messageId}`,
        prompt: wrapGuestMessage(message),
        requestText: message.content,
        workDir: this.options.workDir,
        // A guest's link grants nothing on this computer: every tool call is refused, unasked.
        requestTool: async (tool): Promise<ToolDecision> => {
          denied.push(tool.toolName);
          return "deny";
        },
        signal: stop.signal,
        noTools: true,
      })) {
        if (event.type === "result") result = { text: event.text, isError: event.isError };
      }
    } catch (error) {
      if (current.why) return { state: "not_delivered", reason: current.why };
      if (this.#controller.signal.aborted) return { state: "interrupted", reason: STOPPED };
      return { state: "failed", reason: describeError(error) };
    } finally {
      this.#controller.signal.removeEventListener("abort", onStop);
      this.#current = null;
    }
    if (current.why) return { state: "not_delivered", reason: current.why };
    if (!result) return { state: "failed", reason: "the runtime ended without an answer" };
    if (result.isError) return { state: "failed", reason: result.text || "the runtime reported an error" };
    if (!result.text.trim()) return { state: "failed", reason: "the runtime's answer was empty" };
    return this.#reply(message.messageId, fitAnswer(result.text));
  }

  async #reply(messageId: number, body: string): Promise<Finish> {
    let attempts = 0;
    try {
      await retryTransport(
        () => {
          attempts++;
          return this.options.device.call("replyGuestMessage", { body: { messageId, body } });
        },
        { attempts: 3, delayMs: 500 },
      );
      return { state: "answered", reason: null };
    } catch (error) {
      if (isApiError(error, 409)) {
        // After a lost answer to an earlier attempt, "not pending" may be that attempt's success.
        const reason =
          attempts > 1
            ? "the server could not confirm the answer: it may have reached the guest"
            : "too late: the wait ran out and your server's agent answered the guest";
        return { state: "not_delivered", reason };
      }
      if (isApiError(error, 404)) return { state: "not_delivered", reason: "the link was revoked or expired before the answer was sent" };
      return { state: "not_delivered", reason: `the answer could not be sent: ${describeError(error)}` };
    }
  }
}

/** The reply route's limit, in characters; a longer answer is cut and says so. */
export function fitAnswer(text: string): string {
  return text.length <= MAX_ANSWER_CHARS ? text : `${text.slice(0, MAX_ANSWER_CHARS - CUT_NOTE.length)}${CUT_NOTE}`;
}
