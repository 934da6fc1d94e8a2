import type { TestServer } from "./harness";

export interface ShareLinkBody {
  id: number;
  token: string;
  url: string;
  agentUrl: string;
  scope: string;
  access: string;
  notesAccess: string;
  label: string;
  requireSignIn: boolean;
  isActive: boolean;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
  capabilities: { notes: string; calendar: string; email: boolean; todos: boolean; tools: string[] };
  analytics: Record<string, number>;
  [key: string]: unknown;
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** One request outside `/api/v1` (the guest chat route and the page), as a guest's client sends it. */
export async function guestCall<T = Record<string, unknown>>(
  t: TestServer,
  method: "GET" | "POST",
  pathAndQuery: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const response = await t.fetch(pathAndQuery, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed as T, headers: response.headers };
}

export interface GuestAnswer {
  success: boolean;
  sessionKey: string;
  sessionId: string;
  agentName: string;
  ownerName: string;
  response: string;
  mode: string;
  answeredBy: string;
  toolsUsed: string[];
  messagesLeft: number;
  elapsedMs: number;
  error?: string;
}

export const sendGuest = (t: TestServer, body: Record<string, unknown>, headers?: Record<string, string>) =>
  guestCall<GuestAnswer>(t, "POST", "/api/chat/guest-v04", body, headers);
