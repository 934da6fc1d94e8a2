import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * What the shared part of the fake model providers does: a real HTTP server on port 0 that answers
 * one POST path with scripted replies, records what it was sent, and can stall or fail on request.
 * Each provider (fake-openai.ts, fake-anthropic.ts) only turns a reply into its own wire format.
 */

export interface FakeUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface FakeToolCall {
  name: string;
  args: Record<string, unknown>;
  /** The provider's call id; one is made up when absent. */
  id?: string;
}

/** One scripted answer to one request. */
export type FakeReply =
  /** Text, streamed word by word (see {@link textDeltas}). */
  | { text: string; usage?: FakeUsage }
  /** Tool calls (after optional text), their arguments streamed in several pieces. */
  | { toolCalls: FakeToolCall[]; text?: string; usage?: FakeUsage }
  /** An HTTP error before any stream: the provider's error body unless `body` is given. */
  | { httpError: { status: number; body?: unknown; headers?: Record<string, string> } }
  /** Some text, then the provider's in-stream error event, then the end of the response. */
  | { errorMidStream: true; textBefore?: string; message?: string }
  /** A 200 whose stream (or body) is not JSON. */
  | { garbage: true }
  /** Headers and optional text, then nothing more until the client gives up. */
  | { stall: true; textBefore?: string };

/** A reply that is answered with a 200 (everything but an HTTP error). */
export type BodyReply = Exclude<FakeReply, { httpError: unknown }>;

export type FakeRequestBody = Record<string, unknown> & {
  model?: string;
  stream?: boolean;
  messages?: unknown[];
  tools?: unknown[];
  temperature?: number;
};

export interface FakeProviderOptions {
  /** The answer when the queue is empty (default: a short text). */
  defaultReply?: FakeReply;
  /**
   * Benchmark mode: every request gets this reply at once, whatever is queued, and nothing is
   * recorded (a benchmark sends thousands).
   */
  fixed?: FakeReply;
  /** When set, a request without this key is refused with 401, as the real API does. */
  apiKey?: string;
  /** A pause between streamed chunks, in ms (default 0: everything is written at once). */
  chunkDelayMs?: number;
  /** Awaited before a recorded request is answered: a test acts at that point of a run (between its steps). */
  onRequest?: (request: FakeRequestBody) => Promise<void> | void;
}

export interface FakeProvider {
  /** `http://127.0.0.1:port` */
  readonly url: string;
  /** `http://127.0.0.1:port/v1`: what TANDEM_MODEL_BASE_URL is set to. */
  readonly baseUrl: string;
  /** The parsed bodies of the requests answered so far, oldest first. */
  readonly requests: FakeRequestBody[];
  /** Their headers, index for index. */
  readonly headers: IncomingHttpHeaders[];
  /** Queues replies, answered in order; the default reply follows once they are used up. */
  enqueue(...replies: FakeReply[]): void;
  /** Replies queued and not yet used. */
  readonly pending: number;
  /** Recorded requests whose response has not ended yet (held, stalled, or being written). */
  readonly inFlight: number;
  /** Responses the client closed before they ended: callers that aborted their model call. */
  readonly aborted: number;
  /** Leaves every request that arrives from now on unanswered until the returned function is called. */
  hold(): () => void;
  /** Resolves once `condition` holds; checked whenever a request arrives or a response closes (no polling). */
  until(condition: () => boolean): Promise<void>;
  /** Stops listening and cuts every open response (stalled ones included). */
  close(): Promise<void>;
}

/** How a response goes out: status, headers, the body in chunks, and whether it then stalls. */
export interface ResponsePlan {
  status: number;
  headers: Record<string, string>;
  chunks: string[];
  stall?: boolean;
}

/** One provider's wire format. */
export interface ProviderDialect {
  /** The one path it answers with POST, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Whether the request carries the expected key. */
  authorized(headers: IncomingHttpHeaders, apiKey: string): boolean;
  /** A provider error, as an HTTP response (used for 401, 404 and unreadable requests too). */
  error(status: number, message: string): ResponsePlan;
  /** The response to a request, numbered `seq` (for ids). */
  reply(reply: FakeReply, request: FakeRequestBody, seq: number): ResponsePlan;
}

export const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
export const JSON_HEADERS = { "content-type": "application/json" };

/** Text in the pieces a model would stream: each word with the space after it. */
export function textDeltas(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
}

/** A tool call's JSON arguments in a few pieces, so clients must reassemble them. */
export function argumentPieces(args: Record<string, unknown>): string[] {
  const json = JSON.stringify(args);
  const size = Math.max(1, Math.ceil(json.length / 3));
  const pieces: string[] = [];
  for (let at = 0; at < json.length; at += size) pieces.push(json.slice(at, at + size));
  return pieces;
}

/** Deterministic token counts: about four characters a token, as the real tokenizers roughly give. */
export function estimateUsage(request: FakeRequestBody, output: string): FakeUsage {
  const prompt = JSON.stringify([request.system ?? "", request.messages ?? [], request.tools ?? []]);
  return { promptTokens: Math.ceil(prompt.length / 4), completionTokens: Math.max(1, Math.ceil(output.length / 4)) };
}

/** The text and tool calls a reply produces, for usage estimates. */
export function replyOutput(reply: { text?: string; toolCalls?: FakeToolCall[] }): string {
  return (reply.text ?? "") + (reply.toolCalls ?? []).map((call) => call.name + JSON.stringify(call.args)).join("");
}

const DEFAULT_REPLY: FakeReply = { text: "This is the fake model's answer." };

export async function startFakeProvider(dialect: ProviderDialect, options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const queue: FakeReply[] = [];
  const requests: FakeRequestBody[] = [];
  const headers: IncomingHttpHeaders[] = [];
  let seq = 0;
  let inFlight = 0;
  let aborted = 0;
  let gate: Promise<void> | undefined;
  const waiters = new Set<{ condition: () => boolean; resolve: () => void }>();
  const changed = () => {
    for (const waiter of waiters) {
      if (!waiter.condition()) continue;
      waiters.delete(waiter);
      waiter.resolve();
    }
  };

  const send = async (res: ServerResponse, plan: ResponsePlan) => {
    // A held request whose client left meanwhile has no one to answer.
    if (res.destroyed) return;
    res.writeHead(plan.status, plan.headers);
    if (options.chunkDelayMs) {
      for (const chunk of plan.chunks) {
        if (res.destroyed) return;
        res.write(chunk);
        await new Promise((resolve) => setTimeout(resolve, options.chunkDelayMs));
      }
    } else if (plan.chunks.length > 0) {
      res.write(plan.chunks.join(""));
    }
    // A stalled response stays open: the client's abort (or close()) ends it.
    if (plan.stall) res.flushHeaders();
    else res.end();
  };

  const server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://fake").pathname;
      if (req.method !== "POST" || path !== dialect.path) {
        void send(res, dialect.error(404, `No route ${req.method} ${path} on this fake`));
        return;
      }
      if (options.apiKey !== undefined && !dialect.authorized(req.headers, options.apiKey)) {
        void send(res, dialect.error(401, "Invalid API key"));
        return;
      }
      let request: FakeRequestBody;
      try {
        request = JSON.parse(Buffer.concat(body).toString("utf8")) as FakeRequestBody;
      } catch {
        void send(res, dialect.error(400, "The request body is not JSON"));
        return;
      }
      seq += 1;
      if (options.fixed) {
        void send(res, dialect.reply(options.fixed, request, seq));
        return;
      }
      requests.push(request);
      headers.push(req.headers);
      inFlight += 1;
      res.on("close", () => {
        inFlight -= 1;
        if (!res.writableEnded) aborted += 1;
        changed();
      });
      const plan = dialect.reply(queue.shift() ?? options.defaultReply ?? DEFAULT_REPLY, request, seq);
      const held = gate; // a request that arrives while the model is held waits for its release
      void (async () => {
        await options.onRequest?.(request);
        if (held) await held;
        await send(res, plan);
      })();
      changed();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    headers,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    get pending() {
      return queue.length;
    },
    get inFlight() {
      return inFlight;
    },
    get aborted() {
      return aborted;
    },
    hold() {
      let release = () => {};
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const held = gate;
      return () => {
        if (gate === held) gate = undefined;
        release();
      };
    },
    until: (condition) =>
      new Promise<void>((resolve) => {
        if (condition()) resolve();
        else waiters.add({ condition, resolve });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
