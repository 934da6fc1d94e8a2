import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";

export interface ListeningServer {
  /** `http://127.0.0.1:port` */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves a request listener (an Express app, say) on a free loopback port. */
export async function listenOnFreePort(listener: RequestListener): Promise<ListeningServer> {
  const server = createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets left by the load generator would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

export interface SampledResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** Sends one request and insists on the expected status: a benchmark of error responses measures nothing. */
export async function requestExpecting(
  expectedStatus: number,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<SampledResponse> {
  const response = await fetch(url, {
    method: init.method ?? "GET",
    headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers },
    body: init.body === undefined ? null : JSON.stringify(init.body),
  });
  const body = await response.text();
  if (response.status !== expectedStatus) {
    throw new Error(`${init.method ?? "GET"} ${url} answered ${response.status}, expected ${expectedStatus}: ${body.slice(0, 300)}`);
  }
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", body };
}
