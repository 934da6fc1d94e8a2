// A webhook receiver at the true outside edge: a real HTTP server that verifies every delivery
// with the official `standardwebhooks` library, as a customer's receiver would, and answers as
// each test tells it (a status, a Retry-After, a redirect, or no answer at all).

import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ReceivedWebhook {
  readonly path: string;
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
  readonly body: string;
  readonly payload: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Every secret registered for the path that verified it. */
  readonly verifiedWith: string[];
}

/** What the receiver answers one request with; `hang`: never (the connection stays open). */
export type Answer = { status: number; headers?: Record<string, string> } | "hang";

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Requests that failed verification with every secret of their path (must stay empty). */
  readonly rejected: { path: string; error: string }[] = [];
  readonly #secrets = new Map<string, string[]>();
  readonly #answers = new Map<string, Answer[]>();
  readonly #waiters = new Set<{ test: (w: ReceivedWebhook) => boolean; resolve: (w: ReceivedWebhook) => void }>();
  readonly #hanging = new Set<ServerResponse>();
  #serial = 0;

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer((req, res) => receiver?.handle(req, res));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** A fresh path of this receiver, with its URL. */
  newPath(): { path: string; url: string } {
    const path = `/hook/${++this.#serial}`;
    return { path, url: `${this.origin}${path}` };
  }

  /** The secrets a path's deliveries must verify with (each one must verify). */
  trust(path: string, ...secrets: string[]): void {
    this.#secrets.set(path, secrets);
  }

  /** Answers the next requests to `path` in order; afterwards, 200. */
  answer(path: string, ...answers: Answer[]): void {
    this.#answers.set(path, [...(this.#answers.get(path) ?? []), ...answers]);
  }

  /** Resolves with the next verified delivery matching `test` (or one already received). */
  next(test: (w: ReceivedWebhook) => boolean): Promise<ReceivedWebhook> {
    const seen = this.received.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.add({ test, resolve }));
  }

  /** Resolves with the `count`-th verified delivery matching `test`. */
  async nth(count: number, test: (w: ReceivedWebhook) => boolean): Promise<ReceivedWebhook[]> {
    for (;;) {
      const matching = this.received.filter(test);
      if (matching.length >= count) return matching;
      await new Promise<ReceivedWebhook>((resolve) => this.#waiters.add({ test, resolve }));
    }
  }

  forPath(path: string): ReceivedWebhook[] {
    return this.received.filter((w) => w.path === path);
  }

  async close(): Promise<void> {
    for (const res of this.#hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "/";
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = { "webhook-id": "", "webhook-timestamp": "", "webhook-signature": "" };
      for (const name of Object.keys(headers) as (keyof typeof headers)[]) headers[name] = String(req.headers[name] ?? "");
      const secrets = this.#secrets.get(path) ?? [];
      const verifiedWith: string[] = [];
      const errors: string[] = [];
      for (const secret of secrets) {
        try {
          new Webhook(secret).verify(body, headers);
          verifiedWith.push(secret);
        } catch (error) {
          errors.push((error as Error).message);
        }
      }
      const queued = this.#answers.get(path);
      const answer = queued?.shift() ?? { status: 200 };
      if (verifiedWith.length === 0 || errors.length > 0) {
        this.rejected.push({ path, error: errors.join("; ") || "no secret for this path" });
        res.writeHead(400).end();
        return;
      }
      const received: ReceivedWebhook = {
        path,
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
        body,
        payload: JSON.parse(body),
        verifiedWith,
      };
      this.received.push(received);
      for (const waiter of this.#waiters) {
        if (waiter.test(received)) {
          this.#waiters.delete(waiter);
          waiter.resolve(received);
        }
      }
      if (answer === "hang") {
        this.#hanging.add(res);
        res.on("close", () => this.#hanging.delete(res));
        return;
      }
      res.writeHead(answer.status, answer.headers).end();
    });
  }
}
