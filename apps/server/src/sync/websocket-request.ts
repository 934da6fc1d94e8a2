import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { RawData } from "ws";

// Hop-by-hop headers belong to this socket, not to the request Hocuspocus hooks see.
const HOP_BY_HOP = new Set([
  "host",
  "connection",
  "upgrade",
  "sec-websocket-key",
  "sec-websocket-extensions",
  "keep-alive",
  "transfer-encoding",
]);

/** The upgrade request as the Fetch `Request` Hocuspocus hands its hooks. */
export function toFetchRequest(request: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers as IncomingHttpHeaders)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(new URL(request.url ?? "/", "http://localhost"), { headers });
}

/** A `ws` message's bytes, without a copy where `ws` gave one buffer. */
export function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  return data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
