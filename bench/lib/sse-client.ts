/**
 * A minimal server-sent-events client over `node:http`, as a bridge holds one: it parses frames
 * (`event:`, `data:`, `id:`, comments) and hands each event to a listener the moment its frame is
 * complete. No reconnect: benchmarks open streams that outlive the measurement.
 */
import http from "node:http";

export interface SseEvent {
  readonly type: string;
  /** The raw `data:` text (JSON for Tandem's realtime stream). */
  readonly data: string;
  readonly id: string | undefined;
}

export class SseClient {
  #buffer = "";
  #ended = false;
  #onEvent: (event: SseEvent) => void = () => {};
  readonly #endWaiters: (() => void)[] = [];

  private constructor(private readonly request: http.ClientRequest) {}

  /** Opens `url`; resolves once the server has answered 200 with its headers, rejects otherwise. */
  static open(url: string, headers: Readonly<Record<string, string>> = {}, agent?: http.Agent): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const request = http.request(url, { method: "GET", headers: { accept: "text/event-stream", ...headers }, agent });
      const client = new SseClient(request);
      request.on("response", (response) => {
        if (response.statusCode !== 200) {
          let body = "";
          response.on("data", (chunk: Buffer) => {
            body += chunk.toString("utf8");
          });
          response.on("end", () => reject(new Error(`GET ${url} answered ${response.statusCode}: ${body.slice(0, 300)}`)));
          return;
        }
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => client.#receive(chunk));
        response.on("close", () => client.#end());
        resolve(client);
      });
      request.on("error", (error) => {
        client.#end();
        reject(error);
      });
      request.end();
    });
  }

  /** Receives every later event (one listener; a new one replaces the old). */
  onEvent(listener: (event: SseEvent) => void): void {
    this.#onEvent = listener;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Resolves when the server ends the stream or the connection drops. */
  whenEnded(): Promise<void> {
    return this.#ended ? Promise.resolve() : new Promise((resolve) => this.#endWaiters.push(resolve));
  }

  close(): void {
    this.request.destroy();
    this.#end();
  }

  #receive(chunk: string): void {
    this.#buffer += chunk;
    let boundary = this.#buffer.indexOf("\n\n");
    while (boundary >= 0) {
      const frame = this.#buffer.slice(0, boundary);
      this.#buffer = this.#buffer.slice(boundary + 2);
      this.#frame(frame);
      boundary = this.#buffer.indexOf("\n\n");
    }
  }

  #frame(frame: string): void {
    let type = "message";
    let data: string | undefined;
    let id: string | undefined;
    for (const line of frame.split("\n")) {
      if (line.startsWith("event: ")) type = line.slice(7);
      else if (line.startsWith("data: ")) data = data === undefined ? line.slice(6) : `${data}\n${line.slice(6)}`;
      else if (line.startsWith("id: ")) id = line.slice(4);
    }
    // A frame of comments only (`: ping`) carries no event.
    if (data !== undefined) this.#onEvent({ type, data, id });
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const resolve of this.#endWaiters.splice(0)) resolve();
  }
}
