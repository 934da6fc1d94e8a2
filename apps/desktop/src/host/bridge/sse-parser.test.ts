import { describe, expect, it } from "vitest";
import { SseParser } from "./sse-parser";

describe("SseParser", () => {
  it("answers the data of each complete frame, ignoring comments, event and id lines", () => {
    const parser = new SseParser();
    expect(parser.push(': ping\n\nevent: message.dispatch\ndata: {"cursor":"1"}\nid: 1\n\n')).toEqual(['{"cursor":"1"}']);
  });

  it("joins frames split across chunks, anywhere, with any line ending", () => {
    const parser = new SseParser();
    const text = 'data: {"a":\r\ndata: 1}\r\n\r\ndata:{"b":2}\r\r\n';
    const frames: string[] = [];
    for (const char of text) frames.push(...parser.push(char));
    expect(frames).toEqual(['{"a":\n1}', '{"b":2}']);
  });

  it("keeps an unfinished frame until its blank line arrives", () => {
    const parser = new SseParser();
    expect(parser.push('data: {"c":3}\n')).toEqual([]);
    expect(parser.push("\n")).toEqual(['{"c":3}']);
  });
});
