import { API_BASE_PATH } from "@tandem/core";
import { serverMessage } from "../session/server-client";
import { AGENT_OFFLINE } from "./agent-messages";
import { ChatRun } from "./chat-run";

/** The server answers a chat's headers once the turn is prepared (the conversation found, the message checked). */
const ACCEPT_MS = 30_000;

export interface ChatRequest {
  readonly message: string;
  readonly conversationId?: number;
  readonly userTimezone?: string;
}

/**
 * Sends a message to `POST /chat` and answers the run once the server has accepted it: a refusal
 * (400, 404, 429…) or no server at all rejects here, in words, before anything is shown as sent.
 * The body is then read in the background into the run.
 */
export async function openChat(credentials: { serverUrl: string; apiKey: string }, request: ChatRequest): Promise<ChatRun> {
  const run = new ChatRun();
  // A timeout for the answer's headers only: the same signal governs reading the body, which may take minutes.
  const waiting = new AbortController();
  const timer = setTimeout(() => waiting.abort(new DOMException("No answer in time", "TimeoutError")), ACCEPT_MS);
  const accepted = AbortSignal.any([run.signal, waiting.signal]);
  let response: Response;
  try {
    response = await fetch(`${credentials.serverUrl}${API_BASE_PATH}/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${credentials.apiKey}`, "content-type": "application/json", accept: "text/plain" },
      body: JSON.stringify({ ...request, stream: true }),
      signal: accepted,
      redirect: "manual",
    });
  } catch (error) {
    const timedOut = (error as { name?: unknown } | null)?.name === "TimeoutError";
    throw new Error(timedOut ? "The server did not take the message in time; try again in a moment" : AGENT_OFFLINE, { cause: error });
  } finally {
    clearTimeout(timer);
  }
  if (!response.ok || !response.body) {
    const body: unknown = await response.json().catch(() => null);
    throw new Error(serverMessage(body) ?? `The server refused the message (HTTP ${response.status})`);
  }
  void run.follow(response.body);
  return run;
}
