import { describe, expect, it } from "vitest";
import { markdownToJson } from "./markdown";
import { SAMPLE_MARKDOWN } from "./test-fixtures";
import { countWords, jsonHeadings, jsonToText, textToJson } from "./text";

const paragraph = (text: string) => (text === "" ? { type: "paragraph" } : { type: "paragraph", content: [{ type: "text", text }] });

describe("textToJson", () => {
  it("makes each line a paragraph, taking markup literally", () => {
    expect(textToJson("# one\n\n**two**\r\n<b>three</b>\rfour")).toEqual({
      type: "doc",
      content: [paragraph("# one"), paragraph(""), paragraph("**two**"), paragraph("<b>three</b>"), paragraph("four")],
    });
  });

  it("treats a final line break as the end of the last line", () => {
    expect(textToJson("one\n")).toEqual({ type: "doc", content: [paragraph("one")] });
    expect(textToJson("one\n\n")).toEqual({ type: "doc", content: [paragraph("one"), paragraph("")] });
  });

  it("gives an empty document for empty input", () => {
    expect(textToJson("")).toEqual({ type: "doc", content: [paragraph("")] });
  });

  it.each(["one line", "two\nlines", "\n\nblank lines around\n\n\n", "  indented\ttabs  ", "😀 中文"])("round trips %j", (text) => {
    expect(jsonToText(textToJson(text))).toBe(text.replace(/\n$/, ""));
  });
});

describe("jsonToText", () => {
  it("puts every block on its own line, without markup", () => {
    expect(jsonToText(markdownToJson(SAMPLE_MARKDOWN))).toBe(
      [
        "Heading one",
        "Heading two",
        "Heading six",
        "Some italic, bold, struck, code, underlined and bold italic text with a link and a mail.",
        "After a hard break.",
        "bullet one",
        "bullet two",
        "nested bullet",
        "first",
        "second",
        "nested ordered",
        "third",
        "open task",
        "done task",
        "nested task",
        "A quote",
        "with two paragraphs",
        "const answer = 42;",
        "Emoji 😀👍🏽 and CJK 中文 日本語 한국어",
      ].join("\n"),
    );
  });

  it("keeps the lines of a code block", () => {
    expect(jsonToText(markdownToJson("```\na\n\nb\n```"))).toBe("a\n\nb");
  });
});

describe("jsonHeadings", () => {
  it("lists every heading's line(s) in order, and nothing else", () => {
    expect(jsonHeadings(markdownToJson(SAMPLE_MARKDOWN))).toEqual(["Heading one", "Heading two", "Heading six"]);
    expect(jsonHeadings(markdownToJson("> ### Quoted\n\nplain\n\n## Goals\n\n- run"))).toEqual(["Quoted", "Goals"]);
    expect(jsonHeadings(textToJson("# not a heading"))).toEqual([]);
  });
});

describe("countWords", () => {
  it.each([
    ["", 0],
    ["   \n\t ", 0],
    ["Hello, world!", 2],
    ["  lots   of\nspace  ", 3],
    ["don't e-mail 3.14 1,000 10:30 snake_case U.S.A.", 7],
    ["naïve café Ünïcödé", 3],
    ["Привет мир", 2],
    ["안녕하세요 세계", 2],
    ["中文字", 3],
    ["日本語のテキスト", 8],
    ["mixed 中文 words", 4],
    ["😀 🎉 — – ... * -", 0],
    ["a--b a- -a x.y.z 中x", 7],
  ])("counts %j as %i", (text, words) => {
    expect(countWords(text)).toBe(words);
  });

  it("counts a single word ten million characters long", () => {
    expect(countWords(`${"w".repeat(10_000_000)} end`)).toBe(2);
  });
});
