import type { ChatEnding, ChatEvent, ChatProgress } from "../../shared/desktop-api";
import { ChatLineReader } from "./chat-lines";

/** Clients give up after about 75 s without a byte; the server sends a progress line at least every 15 s. */
export const CHAT_IDLE_MS = 75_000;

type Cause = "stop" | "idle" | "closed";

const BROKEN: Record<Exclude<Cause, "stop"> | "lost", string> = {
  idle: "The server stopped answering (nothing for over a minute). What came so far is kept.",
  closed: "The reply was cut off: you signed out or the app is closing.",
  lost: "The connection to the server was lost before the answer was complete.",
};

/**
 * One reply being received from `POST /chat`: the host reads the stream and keeps its events,
 * and the renderer reads them from here (the host API has no push channel, so the renderer asks
 * again as soon as it has an answer, and an ask with nothing new waits for the next event).
 */
export class ChatRun {
  readonly #events: ChatEvent[] = [];
  readonly #controller = new AbortController();
  readonly #waiting = new Set<() => void>();
  #ending: ChatEnding | null = null;
  #cause: Cause | null = null;
  #resolveEnded = () => {};
  readonly #ended = new Promise<void>((resolve) => {
    this.#resolveEnded = resolve;
  });

  /** Aborts the request: stopping or giving up on the run. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Resolves once the run is over, however it ended. */
  whenEnded(): Promise<void> {
    return this.#ended;
  }

  /** The owner stopped the reply; the server keeps what it answered so far, marked incomplete. */
  stop(): void {
    this.#abort("stop");
  }

  /** Signed out, or the host is closing. */
  close(): void {
    this.#abort("closed");
  }

  /** Reads the response body to its end, then records how the run ended. Never throws. */
  async follow(body: ReadableStream<Uint8Array>): Promise<void> {
    const lines = new ChatLineReader();
    let idle = setTimeout(() => this.#abort("idle"), CHAT_IDLE_MS);
    const reader = body.getReader();
    // The request shares the signal, but the body is cancelled here too: a stop ends the read whatever the body is.
    const cancel = () => void reader.cancel().catch(() => {});
    this.#controller.signal.addEventListener("abort", cancel, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        clearTimeout(idle);
        idle = setTimeout(() => this.#abort("idle"), CHAT_IDLE_MS);
        this.#add(lines.push(value));
      }
      this.#add(lines.end());
    } catch {
      // Aborted or broken: the ending below says which.
    } finally {
      clearTimeout(idle);
      this.#controller.signal.removeEventListener("abort", cancel);
      reader.releaseLock();
    }
    this.#finish();
  }

  /** The run's events after the first `after`, waiting up to `waitMs` when there is nothing new yet. */
  async read(after: number, waitMs: number): Promise<ChatProgress> {
    if (after >= this.#events.length && !this.#ending) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiting.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, waitMs);
        this.#waiting.add(wake);
      });
    }
    const events = this.#events.slice(after);
    // The ending only with the last events, so a reader never sees the end before what came first.
    return { events, next: after + events.length, ended: this.#ending };
  }

  #abort(cause: Cause): void {
    if (this.#ending || this.#cause) return;
    this.#cause = cause;
    this.#controller.abort();
  }

  #add(events: ChatEvent[]): void {
    if (events.length === 0) return;
    this.#events.push(...events);
    this.#wake();
  }

  #finish(): void {
    const completion = this.#events.findLast((event) => event.type === "completion");
    const said = this.#events.findLast((event) => event.type === "error");
    const error = said?.type === "error" ? said.error : null;
    if (completion?.type === "completion") {
      const failed = completion.status === "failed";
      this.#ending = { status: completion.status, error: error ?? (failed ? "The agent could not answer." : null) };
    } else if (this.#cause === "stop") {
      this.#ending = { status: "stopped", error: null };
    } else {
      this.#ending = { status: "failed", error: error ?? BROKEN[this.#cause ?? "lost"] };
    }
    this.#resolveEnded();
    this.#wake();
  }

  #wake(): void {
    for (const wake of [...this.#waiting]) wake();
  }
}
