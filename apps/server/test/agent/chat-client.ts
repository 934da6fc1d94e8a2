import type { TestServer } from "../harness";

/** One parsed line of the chat stream. */
export type ChatLine = { type: string } & Record<string, unknown>;

export interface ChatReply {
  status: number;
  contentType: string | null;
  lines: ChatLine[];
  /** The text deltas joined: the answer as a client shows it. */
  text: string;
}

/** Posts to /chat with a raw fetch and reads the NDJSON body the way clients do (skipping non-JSON lines). */
export async function chat(t: TestServer, apiKey: string, body: Record<string, unknown>): Promise<ChatReply> {
  const response = await t.fetch("/api/v1/chat", {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const raw = await response.text();
  const lines = raw
    .split("\n")
    .filter((line) => line.trim())
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as ChatLine];
      } catch {
        return [];
      }
    });
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    lines,
    text: lines
      .filter((l) => l.type === "text-delta")
      .map((l) => l.textDelta)
      .join(""),
  };
}

export async function chatJson(t: TestServer, apiKey: string, body: Record<string, unknown>) {
  const response = await t.fetch("/api/v1/chat", {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ ...body, stream: false }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
