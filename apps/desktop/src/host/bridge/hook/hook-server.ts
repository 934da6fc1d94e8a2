import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ToolDecision } from "../runtime/runtime-adapter";

const MAX_BODY_BYTES = 1024 * 1024;
const HOOK_PATH = "/pre-tool-use";

/** The part of Claude Code's PreToolUse input the bridge reads. */
export interface PreToolUseInput {
  readonly tool_name: string;
  readonly tool_input: unknown;
  readonly tool_use_id?: string;
}

export type PreToolUseHandler = (input: PreToolUseInput) => Promise<{ decision: ToolDecision; reason?: string }>;

/**
 * The loopback endpoint the hook script asks: 127.0.0.1 on a random port. Each running task has
 * its own random token; a request with any other token, or a malformed one, is answered with a
 * refusal, which the script turns into a blocked call.
 */
export interface HookServer {
  readonly url: string;
  /** Registers a task's handler under a new token; returns the token and an unregister function. */
  register(handler: PreToolUseHandler): { token: string; unregister: () => void };
  close(): Promise<void>;
}

export async function startHookServer(): Promise<HookServer> {
  const handlers = new Map<string, PreToolUseHandler>();
  const server = createServer((request, response) => {
    void answer(request, response, handlers);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${HOOK_PATH}`,
    register(handler) {
      const token = randomBytes(32).toString("hex");
      handlers.set(token, handler);
      return { token, unregister: () => handlers.delete(token) };
    },
    close() {
      handlers.clear();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function answer(request: IncomingMessage, response: ServerResponse, handlers: Map<string, PreToolUseHandler>): Promise<void> {
  const send = (status: number, body: Record<string, unknown>) => {
    response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    response.end(JSON.stringify(body));
  };
  try {
    if (request.method !== "POST" || request.url !== HOOK_PATH) return send(404, { decision: "deny", reason: "not found" });
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1];
    const handler = token ? handlers.get(token) : undefined;
    if (!handler) return send(403, { decision: "deny", reason: "unknown task" });
    const input = parseInput(await readBody(request));
    if (!input) return send(400, { decision: "deny", reason: "malformed hook input" });
    const { decision, reason } = await handler(input);
    send(200, { decision, reason });
  } catch {
    if (!response.headersSent) send(500, { decision: "deny", reason: "the desktop could not decide" });
  }
}

function parseInput(text: string): PreToolUseInput | null {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (typeof value.tool_name !== "string" || value.tool_name === "") return null;
    return {
      tool_name: value.tool_name,
      tool_input: value.tool_input,
      tool_use_id: typeof value.tool_use_id === "string" ? value.tool_use_id : undefined,
    };
  } catch {
    return null;
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error("hook input too large"));
        request.destroy();
      } else chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}
