import { describe, expect, it } from "vitest";
import { ChatLineReader } from "./chat-lines";
import { ChatRun } from "./chat-run";

const encoder = new TextEncoder();
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const completion = (status: string) =>
  line({
    type: "completion",
    conversationId: 7,
    messageId: 9,
    status,
    toolsUsed: [],
    metadata: { promptTokens: 1, completionTokens: 1, totalTokens: 2, model: "local", modelId: "tandem-local" },
  });

/** A response body that sends `chunks`, then either ends or stays open until cancelled. */
function body(chunks: (string | Uint8Array)[], end = true): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      if (end) controller.close();
    },
  });
}

describe("the chat stream's lines", () => {
  it("joins lines split across chunks, characters split across bytes too, and skips what it does not know", () => {
    const reader = new ChatLineReader();
    const delta = encoder.encode(line({ type: "text-delta", textDelta: "Mars 3 · é" }));
    const cut = delta.length - 3; // inside the two bytes of "é"
    expect(reader.push(encoder.encode(line({ type: "conversation-start", conversationId: 7 }).slice(0, 10)))).toEqual([]);
    expect(reader.push(encoder.encode(line({ type: "conversation-start", conversationId: 7 }).slice(10)))).toEqual([
      { type: "conversation-start", conversationId: 7 },
    ]);
    expect(reader.push(delta.slice(0, cut))).toEqual([]);
    expect(reader.push(delta.slice(cut))).toEqual([{ type: "text-delta", textDelta: "Mars 3 · é" }]);
    // Not JSON, a type from a newer server, a known type with a wrong field: skipped.
    expect(reader.push(encoder.encode(`not json\n${line({ type: "sparkles" })}${line({ type: "text-delta", textDelta: 3 })}`))).toEqual([]);
    // The last line may lack its newline; the completion is cut to what the renderer reads.
    expect(reader.push(encoder.encode(completion("completed").trimEnd()))).toEqual([]);
    expect(reader.end()).toEqual([{ type: "completion", conversationId: 7, messageId: 9, status: "completed" }]);
  });
});

describe("a chat run", () => {
  it("ends as the completion says, with the last error line's words", async () => {
    const run = new ChatRun();
    await run.follow(
      body([line({ type: "text-delta", textDelta: "Part" }), line({ type: "error", error: "Time ran out." }), completion("incomplete")]),
    );
    const progress = await run.read(0, 10);
    expect(progress.ended).toEqual({ status: "incomplete", error: "Time ran out." });
    expect(progress.next).toBe(3);
    expect((await run.read(3, 10)).events).toEqual([]);
  });

  it("ends as failed, in words, when the stream stops without a completion", async () => {
    const run = new ChatRun();
    await run.follow(body([line({ type: "text-delta", textDelta: "Half" })]));
    expect((await run.read(1, 10)).ended).toEqual({
      status: "failed",
      error: "The connection to the server was lost before the answer was complete.",
    });
  });

  it("stops: a waiting read wakes with the ending, and what came stays", async () => {
    const run = new ChatRun();
    const following = run.follow(body([line({ type: "text-delta", textDelta: "So far" })], false));
    expect((await run.read(0, 1000)).events).toEqual([{ type: "text-delta", textDelta: "So far" }]);
    const waiting = run.read(1, 10_000);
    run.stop();
    await following;
    expect(await waiting).toEqual({ events: [], next: 1, ended: { status: "stopped", error: null } });
    expect(run.signal.aborted).toBe(true);
  });
});
