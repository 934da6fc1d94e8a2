/**
 * The realtime benchmark's baseline: a bare `node:http` server that holds event streams and, on
 * each POSTed message, writes one `message.dispatch` frame to every held stream and answers 201.
 * No authentication, no storage, no validation: the floor of "POST in, SSE frame out" on loopback.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface BareSseServer {
  /** `http://127.0.0.1:port`; streams at `/stream`, messages at `POST /messages`. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startBareSse(): Promise<BareSseServer> {
  const streams = new Set<ServerResponse>();
  let cursor = 0;
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/stream") {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-transform" });
      res.flushHeaders();
      streams.add(res);
      res.on("close", () => streams.delete(res));
      return;
    }
    if (req.method === "POST" && req.url === "/messages") {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        cursor++;
        const messageId = `msg_${cursor}`;
        const deliveryId = `dlv_${cursor}`;
        const createdAt = new Date().toISOString();
        const event = {
          cursor: String(cursor),
          type: "message.dispatch",
          endpointId: "ep_bare",
          createdAt,
          data: { envelope: { id: messageId, ...body, createdAt }, deliveryId },
        };
        const frame = `event: message.dispatch\ndata: ${JSON.stringify(event)}\nid: ${cursor}\n\n`;
        for (const stream of streams) stream.write(frame);
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ success: true, messageId, deliveryId, status: "queued", duplicate: false, queuedAt: createdAt }));
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stream of streams) stream.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
