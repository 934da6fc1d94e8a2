import type { IncomingMessage, ServerResponse } from "node:http";

// The small HTTP vocabulary web mode's handlers share.

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

/** Bodies follow the server's API conventions: `success` plus either the result or a stable error code. */
export function sendJson(response: ServerResponse, status: number, body: Record<string, unknown>): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

export function sendJsonError(response: ServerResponse, status: number, error: string, message: string): void {
  sendJson(response, status, { success: false, error, message });
}

/** A successful call's string result, as the body itself (see host-api-handler.ts). */
export function sendText(response: ServerResponse, text: string): void {
  response.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text) });
  response.end(text);
}
