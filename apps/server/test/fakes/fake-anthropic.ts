import {
  argumentPieces,
  type BodyReply,
  estimateUsage,
  type FakeProvider,
  type FakeProviderOptions,
  type FakeRequestBody,
  JSON_HEADERS,
  type ProviderDialect,
  type ResponsePlan,
  replyOutput,
  SSE_HEADERS,
  startFakeProvider,
  textDeltas,
} from "./fake-provider";

/**
 * A fake Anthropic Messages server (`POST /v1/messages`): JSON, or with `stream: true` the named
 * server-sent events message_start, content_block_start / content_block_delta (text_delta,
 * input_json_delta) / content_block_stop per block, message_delta with the stop reason and output
 * tokens, message_stop; errors as `{type: "error", error: {type, message}}`, in a body or an event.
 */

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

function errorBody(status: number, message: string) {
  return { type: "error", error: { type: ERROR_TYPES[status] ?? "api_error", message } };
}

const event = (value: { type: string; [field: string]: unknown }) => `event: ${value.type}\ndata: ${JSON.stringify(value)}\n\n`;

function streamed(reply: BodyReply, request: FakeRequestBody, seq: number): ResponsePlan {
  const text = "text" in reply ? reply.text : "textBefore" in reply ? reply.textBefore : undefined;
  const calls = "toolCalls" in reply ? reply.toolCalls : [];
  const usage = ("usage" in reply && reply.usage) || estimateUsage(request, replyOutput({ text, toolCalls: calls }));
  const plan = (chunks: string[], stall = false): ResponsePlan => ({ status: 200, headers: SSE_HEADERS, chunks, stall });
  const start = event({
    type: "message_start",
    message: {
      id: `msg_fake_${seq}`,
      type: "message",
      role: "assistant",
      model: request.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.promptTokens, output_tokens: 1 },
    },
  });
  if ("garbage" in reply) return plan([start, "event: content_block_delta\ndata: {this is not json\n\n"]);

  const chunks = [start, event({ type: "ping" })];
  let index = 0;
  if (text) {
    chunks.push(event({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
    for (const delta of textDeltas(text))
      chunks.push(event({ type: "content_block_delta", index, delta: { type: "text_delta", text: delta } }));
  }
  if ("stall" in reply) return plan(chunks, true);
  if ("errorMidStream" in reply) return plan([...chunks, event(errorBody(529, reply.message ?? "Overloaded"))]);
  if (text) chunks.push(event({ type: "content_block_stop", index: index++ }));

  calls.forEach((call, n) => {
    const id = call.id ?? `toolu_fake_${seq}_${n}`;
    chunks.push(event({ type: "content_block_start", index, content_block: { type: "tool_use", id, name: call.name, input: {} } }));
    for (const piece of ["", ...argumentPieces(call.args)]) {
      chunks.push(event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } }));
    }
    chunks.push(event({ type: "content_block_stop", index: index++ }));
  });
  chunks.push(
    event({
      type: "message_delta",
      delta: { stop_reason: calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.completionTokens },
    }),
    event({ type: "message_stop" }),
  );
  return plan(chunks);
}

function whole(reply: BodyReply, request: FakeRequestBody, seq: number): ResponsePlan {
  if ("garbage" in reply) return { status: 200, headers: JSON_HEADERS, chunks: ["<html>not json</html>"] };
  if ("stall" in reply) return { status: 200, headers: JSON_HEADERS, chunks: [], stall: true };
  if ("errorMidStream" in reply) {
    return { status: 529, headers: JSON_HEADERS, chunks: [JSON.stringify(errorBody(529, reply.message ?? "Overloaded"))] };
  }
  const calls = "toolCalls" in reply ? reply.toolCalls : [];
  const usage = reply.usage ?? estimateUsage(request, replyOutput(reply));
  const body = {
    id: `msg_fake_${seq}`,
    type: "message",
    role: "assistant",
    model: request.model,
    content: [
      ...(reply.text ? [{ type: "text", text: reply.text }] : []),
      ...calls.map((call, n) => ({ type: "tool_use", id: call.id ?? `toolu_fake_${seq}_${n}`, name: call.name, input: call.args })),
    ],
    stop_reason: calls.length > 0 ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
  };
  return { status: 200, headers: JSON_HEADERS, chunks: [JSON.stringify(body)] };
}

const anthropicDialect: ProviderDialect = {
  path: "/v1/messages",
  authorized: (headers, apiKey) => headers["x-api-key"] === apiKey,
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

/** Starts a fake Anthropic Messages server on 127.0.0.1, port 0. */
export function startFakeAnthropic(options?: FakeProviderOptions): Promise<FakeProvider> {
  return startFakeProvider(anthropicDialect, options);
}

export type { FakeProvider, FakeProviderOptions, FakeReply, FakeRequestBody, FakeToolCall, FakeUsage } from "./fake-provider";
