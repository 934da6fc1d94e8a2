/**
 * Child process holding many realtime streams (one per endpoint, as 1,000 bridges would), apart
 * from the benchmark so that the clients' sockets and buffers do not count as the server's memory.
 */
import { serveParent } from "./child";
import { SseClient } from "./sse-client";

export interface OpenStreamsRequest {
  /** `http://host:port/api/v1` */
  readonly apiUrl: string;
  readonly bridges: readonly { readonly endpointId: string; readonly deviceToken: string }[];
  /** Connections being opened at once (the listen backlog is finite). */
  readonly concurrency: number;
}

export interface OpenStreamsAnswer {
  readonly opened: number;
  readonly failed: number;
  readonly firstError: string | null;
  /** From the first request to the last stream's headers. */
  readonly ms: number;
  readonly childRss: number;
}

export interface AwaitEventAnswer {
  readonly streams: number;
  readonly received: number;
  /** Streams that ended (server-side) while waiting. */
  readonly ended: number;
  /** From arming to the last stream's event (or the timeout). */
  readonly ms: number;
}

const clients: SseClient[] = [];

async function openStreams(request: OpenStreamsRequest): Promise<OpenStreamsAnswer> {
  const started = performance.now();
  let failed = 0;
  let firstError: string | null = null;
  let next = 0;
  const worker = async () => {
    while (next < request.bridges.length) {
      const bridge = request.bridges[next++];
      if (!bridge) break;
      const query = new URLSearchParams({ endpointId: bridge.endpointId });
      try {
        clients.push(
          await SseClient.open(`${request.apiUrl}/local-realtime/stream?${query}`, { authorization: `Bearer ${bridge.deviceToken}` }),
        );
      } catch (error) {
        failed++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: request.concurrency }, worker));
  return { opened: clients.length, failed, firstError, ms: performance.now() - started, childRss: process.memoryUsage().rss };
}

/**
 * Starts listening for one event of `type` on every open stream. Separate from {@link collect}
 * so that the parent appends only once every listener is in place.
 */
let armed: Promise<AwaitEventAnswer> | undefined;

async function arm(input: { type: string; timeoutMs: number }): Promise<void> {
  const started = performance.now();
  let received = 0;
  armed = new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      resolve({ streams: clients.length, received, ended: clients.filter((c) => c.ended).length, ms: performance.now() - started });
    };
    const timer = setTimeout(finish, input.timeoutMs);
    for (const client of clients) {
      let seen = false;
      client.onEvent((event) => {
        if (seen || event.type !== input.type) return;
        seen = true;
        received++;
        if (received === clients.length) finish();
      });
    }
  });
}

async function collect(): Promise<AwaitEventAnswer> {
  if (!armed) throw new Error("arm first");
  return armed;
}

async function closeAll(): Promise<void> {
  for (const client of clients.splice(0)) client.close();
}

serveParent(
  {
    open: (input) => openStreams(input as OpenStreamsRequest),
    arm: (input) => arm(input as { type: string; timeoutMs: number }),
    collect,
    close: closeAll,
  },
  closeAll,
);
