import { APICallError } from "@ai-sdk/provider";

/** Why a run ended early, as the runner tells its caller. */
export class RunTimeout extends Error {
  override name = "RunTimeout";
}

export class ClientGone extends Error {
  override name = "ClientGone";
}

/**
 * A model failure in words a person understands. Provider bodies and URLs stay in the log: they
 * may echo request details, and they mean nothing to the person chatting.
 */
export function describeModelError(error: unknown): string {
  if (error instanceof RunTimeout) return "The agent ran out of time before it finished its answer.";
  // After its retries the SDK wraps the last failure; that one says what happened.
  const last = (error as { lastError?: unknown } | null)?.lastError;
  if (last !== undefined) return describeModelError(last);
  if (APICallError.isInstance(error)) {
    if (error.statusCode === 401 || error.statusCode === 403) return "The model provider refused the server's credentials.";
    if (error.statusCode === 429) return "The model provider is rate limiting requests; try again in a moment.";
    if (error.statusCode !== undefined) return `The model provider answered with an error (HTTP ${error.statusCode}).`;
    return "The model provider can't be reached.";
  }
  // An error event inside the provider's stream (the SDK's StreamProviderError, or the bare event):
  // the provider's own words, which name no request detail.
  const streamed =
    error instanceof Error ? (error as { data?: { message?: unknown } }).data?.message : (error as { message?: unknown } | null)?.message;
  if (typeof streamed === "string" && (!(error instanceof Error) || error.name === "AI_StreamProviderError")) {
    return `The model provider reported an error: ${streamed.slice(0, 200)}`;
  }
  const text =
    error instanceof Error ? `${error.name} ${error.message} ${String((error as { cause?: unknown }).cause ?? "")}` : String(error);
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|fetch failed|socket hang up|ECONNRESET/i.test(text)) return "The model provider can't be reached.";
  if (/JSON|parse|TypeValidation|InvalidResponse/i.test(text)) return "The model provider sent an answer the server could not read.";
  return "The model failed to answer.";
}
