import type { MessageAckBody, TandemClient } from "@tandem/core";
import { DispatchData, type DispatchEnvelope, REPLY_TARGET_KIND, RUNNABLE_KINDS } from "./dispatch-envelope";
import type { PeopleDirectory } from "./people";
import type { RuntimeAdapter, RuntimeUsage } from "./runtime/runtime-adapter";
import type { BridgeSpool, SpoolEntry } from "./spool";
import type { ToolGate } from "./tool-gate";
import { requestText, wrapUntrustedRequest } from "./untrusted-prompt";
import { apiErrorCode, describeError, isApiError, retryTransport } from "./wire-client";

/** A reply is at most 32 KiB on the wire; longer answers are cut (and say so). */
const MAX_REPLY_BYTES = 32 * 1024 - 256;
/** After a transport failure, waiting entries are tried again this much later. */
const RETRY_AFTER_MS = 5_000;

export interface InjectorOptions {
  readonly device: TandemClient;
  readonly endpointId: string;
  readonly sessionHandle: string;
  readonly spool: BridgeSpool;
  readonly runtime: RuntimeAdapter;
  readonly toolGate: ToolGate;
  readonly people: PeopleDirectory;
  readonly workDir: string;
  /** Called whenever an entry changes state (the status's active task count). */
  readonly onActivity: () => void;
  /** A message whose runtime stopped with the app: tool calls it still waits on are moot. */
  readonly onInterrupted: (messageId: string) => void;
}

type AckPhase = MessageAckBody["phase"];

/**
 * From a `message.dispatch` to a reply: spool, device ack, injection validation, runtime, acks and
 * reply. Entries run one at a time, oldest first. A message is run at most once: the spool's state
 * moves to `running` before the runtime starts, and a restart never runs a `running` entry again.
 */
export class Injector {
  readonly #controller = new AbortController();
  #draining: Promise<void> | undefined;
  #again = false;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: InjectorOptions) {}

  /**
   * Handles a dispatch event: stores the message (once) and acknowledges it to the server, also for a
   * replayed event (acks are idempotent per attempt). Resolves once the message is safely stored, so
   * the cursor may move past it.
   */
  async receive(data: Record<string, unknown>): Promise<void> {
    const parsed = DispatchData.safeParse(data);
    if (!parsed.success) return;
    const { envelope, deliveryId } = parsed.data;
    if (envelope.target.endpointId !== this.options.endpointId) return; // Not ours: skipped, as the wire says.
    await this.options.spool.receive(envelope, deliveryId);
    this.options.onActivity();
    // Not awaited: the stream goes on (approval decisions may be next); the worker acks again before validating.
    void this.#ack(envelope.id, deliveryId, "device_ack").catch(() => {});
    this.wake();
  }

  /** Marks entries a previous launch left `running` as failed (never re-runs them), then works the spool. */
  async resume(): Promise<void> {
    for (const entry of await this.options.spool.interrupted()) await this.#interrupt(entry);
    this.options.onActivity();
    this.wake();
  }

  /** Starts working the spool if it is not already. */
  wake(): void {
    if (this.#controller.signal.aborted) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = this.#drain().finally(() => {
      this.#draining = undefined;
    });
  }

  async stop(): Promise<void> {
    this.#controller.abort();
    clearTimeout(this.#retryTimer);
    await this.#draining;
  }

  async #drain(): Promise<void> {
    do {
      this.#again = false;
      for (;;) {
        if (this.#controller.signal.aborted) return;
        const entry = await this.options.spool.nextWaiting();
        if (!entry) break;
        try {
          await this.#process(entry);
        } catch (error) {
          if (this.#controller.signal.aborted) return;
          if (isApiError(error) && error.status !== 401) {
            // The server refused a step before the runtime started (say, 404: not this device's
            // message): that is its answer, and the message is never run.
            await this.#reject(entry, apiErrorCode(error) ?? `refused_${error.status}`);
            continue;
          }
          // The server could not be reached (or the token is being replaced): the entry waits; nothing ran.
          clearTimeout(this.#retryTimer);
          this.#retryTimer = setTimeout(() => this.wake(), RETRY_AFTER_MS);
          return;
        } finally {
          this.options.onActivity();
        }
      }
    } while (this.#again);
  }

  async #process(entry: SpoolEntry): Promise<void> {
    const { spool } = this.options;
    const { envelope } = entry;
    await this.#ack(entry.messageId, entry.deliveryId, "device_ack");

    if (envelope.target.kind === REPLY_TARGET_KIND) {
      // An answer to something this owner asked: it is for the owner, not work for the runtime.
      await this.#ack(entry.messageId, entry.deliveryId, "runtime_ack", { resultCode: "reply_received" });
      return spool.setState(entry.messageId, "done", "reply_received");
    }
    if (!RUNNABLE_KINDS.has(envelope.kind)) return this.#reject(entry, "unsupported_kind");

    const verdict = await retryTransport(() =>
      this.options.device.call("validateInjection", {
        body: {
          messageId: entry.messageId,
          communicationSessionId: entry.communicationSessionId,
          endpointId: this.options.endpointId,
          sessionHandle: envelope.target.sessionHandle ?? this.options.sessionHandle,
        },
      }),
    );
    if (!verdict.valid) return this.#reject(entry, verdict.reason);
    await spool.setState(entry.messageId, "validated");
    await this.#ack(entry.messageId, entry.deliveryId, "runtime_pending");
    await spool.setState(entry.messageId, "running");
    this.options.onActivity();
    await this.#run(entry, envelope);
  }

  /** The app stopped while the runtime had this message: failed (retryable by the sender), never run again. */
  async #interrupt(entry: SpoolEntry): Promise<void> {
    await this.options.spool.setState(entry.messageId, "failed", "interrupted: the app stopped while the runtime worked on it");
    await this.#ack(entry.messageId, entry.deliveryId, "runtime_failed", { resultCode: "runtime_interrupted", retryable: true }).catch(
      () => {},
    );
    this.options.onInterrupted(entry.messageId);
  }

  /** The runtime failed: recorded and reported; the peer gets no reply (the delivery is final). */
  async #fail(entry: SpoolEntry, why: string): Promise<void> {
    await this.options.spool.setState(entry.messageId, "failed", `runtime: ${why}`);
    await this.#ack(entry.messageId, entry.deliveryId, "runtime_failed", { resultCode: "runtime_error", retryable: false }).catch(() => {});
  }

  /** Invalid: recorded, reported as a runtime failure, never run. */
  async #reject(entry: SpoolEntry, reason: string): Promise<void> {
    await this.options.spool.setState(entry.messageId, "rejected", reason);
    await this.#ack(entry.messageId, entry.deliveryId, "runtime_failed", { resultCode: reason, retryable: false }).catch(() => {});
  }

  /** From here on the message counts as taken: whatever happens, it is never run again. */
  async #run(entry: SpoolEntry, envelope: DispatchEnvelope): Promise<void> {
    const { spool, runtime, toolGate } = this.options;
    const signal = this.#controller.signal;
    const sender = await this.options.people.identity(envelope.senderPrincipalId);
    const call = {
      communicationSessionId: entry.communicationSessionId,
      sessionHandle: envelope.target.sessionHandle ?? this.options.sessionHandle,
      messageId: entry.messageId,
    };
    let result: { text: string; isError: boolean } | null = null;
    let usage: RuntimeUsage | null = null;
    await this.#setSessionState("busy");
    try {
      for await (const event of runtime.run({
        id: entry.messageId,
        prompt: wrapUntrustedRequest(envelope, sender),
        requestText: requestText(envelope.payload),
        workDir: this.options.workDir,
        requestTool: (tool) => toolGate.request(call, tool, signal),
        signal,
      })) {
        if (event.type === "usage") usage = event.usage;
        else if (event.type === "result") result = { text: event.text, isError: event.isError };
      }
      if (!result) throw new Error("the runtime ended without a result");
    } catch (error) {
      if (signal.aborted) return this.#interrupt(entry);
      return this.#fail(entry, describeError(error));
    } finally {
      await this.#setSessionState("idle");
    }
    if (result.isError) return this.#fail(entry, result.text);
    try {
      await this.#ack(entry.messageId, entry.deliveryId, "runtime_ack", { usage: usage ?? undefined }, 6);
      await retryTransport(
        () =>
          this.options.device.call("replyToGrantMessage", {
            params: { id: entry.messageId },
            body: { body: fitReply(result.text), clientMessageId: `reply-${entry.messageId}` },
          }),
        { attempts: 6, delayMs: 1_000 },
      );
      await spool.setState(entry.messageId, "done");
    } catch (error) {
      // The work is done and will not be repeated; the server refused or could not take the answer.
      const code = apiErrorCode(error);
      await spool.setState(entry.messageId, "done", `reply not delivered: ${code ?? describeError(error)}`);
    }
  }

  async #ack(messageId: string, deliveryId: string, phase: AckPhase, extra: Partial<MessageAckBody> = {}, attempts = 3): Promise<void> {
    await retryTransport(
      () =>
        this.options.device.call("ackGrantMessage", {
          params: { id: messageId },
          // One attempt id per delivery: a re-sent ack (after a replay or a retry) is recognised as the same.
          body: { phase, attemptId: `desktop-${deliveryId}`, ...extra },
        }),
      { attempts, delayMs: 1_000 },
    );
  }

  async #setSessionState(state: "busy" | "idle"): Promise<void> {
    try {
      await this.options.device.call("updateRuntimeSession", { params: { handle: this.options.sessionHandle }, body: { state } });
    } catch {
      // Advisory only: a missed busy/idle flag changes no routing.
    }
  }
}

/** Cuts a reply to the wire's 32 KiB (counted in UTF-8 bytes), saying so. */
export function fitReply(text: string): string {
  if (Buffer.byteLength(text, "utf8") <= MAX_REPLY_BYTES) return text;
  let cut = text.slice(0, MAX_REPLY_BYTES);
  while (Buffer.byteLength(cut, "utf8") > MAX_REPLY_BYTES - 40) cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return `${cut}\n\n[answer cut to fit 32 KiB]`;
}
