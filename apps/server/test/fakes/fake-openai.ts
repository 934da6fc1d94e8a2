import {
  argumentPieces,
  type BodyReply,
  estimateUsage,
  type FakeProvider,
  type FakeProviderOptions,
  type FakeRequestBody,
  type FakeUsage,
  JSON_HEADERS,
  type ProviderDialect,
  type ResponsePlan,
  replyOutput,
  SSE_HEADERS,
  startFakeProvider,
  textDeltas,
} from "./fake-provider";

/**
 * A fake OpenAI chat completions server (`POST /v1/chat/completions`), as Ollama, llama.cpp, vLLM,
 * LM Studio and OpenAI speak it: JSON, or with `stream: true` server-sent `chat.completion.chunk`
 * events ending in `data: [DONE]`, with the usage chunk OpenAI sends after the finish reason when
 * `stream_options.include_usage` asks for it.
 */

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_api_key",
  404: "not_found_error",
  429: "rate_limit_exceeded",
};

function errorBody(status: number, message: string) {
  return { error: { message, type: ERROR_TYPES[status] ?? "server_error", param: null, code: null } };
}

const sse = (value: unknown) => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;

const usageOf = (usage: FakeUsage) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.promptTokens + usage.completionTokens,
});

function streamed(reply: BodyReply, request: FakeRequestBody, seq: number): ResponsePlan {
  const base = {
    id: `chatcmpl-fake-${seq}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: request.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const chunks = [chunk({ role: "assistant", content: "" })];
  const plan = (extra: Partial<ResponsePlan> = {}): ResponsePlan => ({ status: 200, headers: SSE_HEADERS, chunks, ...extra });

  if ("garbage" in reply) return plan({ chunks: ["data: {this is not json\n\n", sse("[DONE]")] });
  if ("stall" in reply) {
    for (const delta of textDeltas(reply.textBefore ?? "")) chunks.push(chunk({ content: delta }));
    return plan({ stall: true });
  }
  if ("errorMidStream" in reply) {
    for (const delta of textDeltas(reply.textBefore ?? "")) chunks.push(chunk({ content: delta }));
    chunks.push(sse(errorBody(500, reply.message ?? "The fake model failed mid-stream")));
    return plan();
  }

  for (const delta of textDeltas(reply.text ?? "")) chunks.push(chunk({ content: delta }));
  const calls = "toolCalls" in reply ? reply.toolCalls : [];
  calls.forEach((call, index) => {
    const id = call.id ?? `call_fake_${seq}_${index}`;
    chunks.push(chunk({ tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const piece of argumentPieces(call.args)) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, calls.length > 0 ? "tool_calls" : "stop"));
  const options = request.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage) {
    const usage = reply.usage ?? estimateUsage(request, replyOutput(reply));
    chunks.push(sse({ ...base, choices: [], usage: usageOf(usage) }));
  }
  chunks.push(sse("[DONE]"));
  return plan();
}

function whole(reply: BodyReply, request: FakeRequestBody, seq: number): ResponsePlan {
  if ("garbage" in reply) return { status: 200, headers: JSON_HEADERS, chunks: ["<html>not json</html>"] };
  if ("stall" in reply) return { status: 200, headers: JSON_HEADERS, chunks: [], stall: true };
  if ("errorMidStream" in reply) {
    return { status: 500, headers: JSON_HEADERS, chunks: [JSON.stringify(errorBody(500, reply.message ?? "The fake model failed"))] };
  }
  const calls = "toolCalls" in reply ? reply.toolCalls : [];
  const message = {
    role: "assistant",
    content: reply.text ?? null,
    ...(calls.length > 0 && {
      tool_calls: calls.map((call, index) => ({
        id: call.id ?? `call_fake_${seq}_${index}`,
        type: "function",
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      })),
    }),
  };
  const body = {
    id: `chatcmpl-fake-${seq}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [{ index: 0, message, finish_reason: calls.length > 0 ? "tool_calls" : "stop" }],
    usage: usageOf(reply.usage ?? estimateUsage(request, replyOutput(reply))),
  };
  return { status: 200, headers: JSON_HEADERS, chunks: [JSON.stringify(body)] };
}

const openAIDialect: ProviderDialect = {
  path: "/v1/chat/completions",
  authorized: (headers, apiKey) => headers.authorization === `Bearer ${apiKey}`,
  error: (status, message) => ({ status, headers: JSON_HEADERS, chunks: [JSON.stringify(errorBody(status, message))] }),
  reply(reply, request, seq) {
    if ("httpError" in reply) {
      const { status, body, headers } = reply.httpError;
      const text = JSON.stringify(body ?? errorBody(status, `The fake provider answered ${status}`));
      return { status, headers: { ...JSON_HEADERS, ...headers }, chunks: [text] };
    }
    return request.stream === true ? streamed(reply, request, seq) : whole(reply, request, seq);
  },
};

/** Starts a fake OpenAI-compatible server on 127.0.0.1, port 0. */
export function startFakeOpenAI(options?: FakeProviderOptions): Promise<FakeProvider> {
  return startFakeProvider(openAIDialect, options);
}

export type { FakeProvider, FakeProviderOptions, FakeReply, FakeRequestBody, FakeToolCall, FakeUsage } from "./fake-provider";
