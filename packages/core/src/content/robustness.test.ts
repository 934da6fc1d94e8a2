import type { JSONContent } from "@tiptap/core";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { htmlToJson, jsonToHtml } from "./html";
import { jsonToMarkdown, markdownToJson } from "./markdown";
import { MAX_DEPTH, normalizeJson } from "./normalize";
import { depthOf, nestedMarkdownList, SAMPLE_MARKDOWN } from "./test-fixtures";
import { countWords, jsonToText, textToJson } from "./text";
import { readNoteBody, writeNoteBody } from "./yjs";

const TEN_MB = 10 * 1024 * 1024;

function timed<T>(label: string, run: () => T): T {
  const start = performance.now();
  const result = run();
  console.info(`${label}: ${Math.round(performance.now() - start)} ms`);
  return result;
}

/** Every conversion, each checked to give back what it was given. */
function expectEveryConversionToKeep(json: JSONContent): void {
  expect(markdownToJson(jsonToMarkdown(json))).toEqual(json);
  expect(htmlToJson(jsonToHtml(json))).toEqual(json);
  const doc = new Y.Doc();
  writeNoteBody(doc, json);
  expect(readNoteBody(doc)).toEqual(json);
}

describe("large input", () => {
  it("converts 10 MB of Markdown", { timeout: 300_000 }, () => {
    const markdown = `${SAMPLE_MARKDOWN}\n\n`.repeat(Math.ceil(TEN_MB / (SAMPLE_MARKDOWN.length + 2)));
    const json = timed(`markdownToJson, ${(markdown.length / 2 ** 20).toFixed(1)} MB`, () => markdownToJson(markdown));
    const blocks = markdownToJson(SAMPLE_MARKDOWN).content?.length ?? 0;
    expect(json.content?.length).toBeGreaterThan(blocks * (markdown.length / (SAMPLE_MARKDOWN.length + 2) - 1));
    // Re-rendering adds one empty paragraph where the repeated samples join.
    expect(timed("jsonToMarkdown", () => jsonToMarkdown(json)).length).toBeGreaterThan(markdown.length * 0.9);
    expect(timed("jsonToHtml", () => jsonToHtml(json)).length).toBeGreaterThan(markdown.length);
    const text = timed("jsonToText", () => jsonToText(json));
    expect(timed("countWords", () => countWords(text))).toBeGreaterThan(1_000_000);
  });

  it("converts 10 MB of text", { timeout: 120_000 }, () => {
    const line = "A line of plain text with *no* markup, 😀 and 中文.";
    const text = Array.from({ length: Math.ceil(TEN_MB / (line.length + 1)) }, (_, i) => `${i} ${line}`).join("\n");
    const json = timed(`textToJson, ${(text.length / 2 ** 20).toFixed(1)} MB`, () => textToJson(text));
    expect(timed("jsonToText", () => jsonToText(json))).toBe(text);
  });

  it("writes and reads a 1 MB note in Yjs", { timeout: 120_000 }, () => {
    const json = markdownToJson(`${SAMPLE_MARKDOWN}\n\n`.repeat(Math.ceil(2 ** 20 / SAMPLE_MARKDOWN.length)));
    const doc = new Y.Doc();
    timed("writeNoteBody, 1 MB", () => writeNoteBody(doc, json));
    expect(timed("readNoteBody, 1 MB", () => readNoteBody(doc))).toEqual(json);
  });
});

describe("deep nesting", () => {
  it.each([
    ["bullet lists", nestedMarkdownList(200)],
    ["ordered lists", Array.from({ length: 200 }, (_, i) => `${"   ".repeat(i)}1. level ${i}`).join("\n")],
    ["task lists", nestedMarkdownList(200, "- [ ]")],
    ["quotes", `${"> ".repeat(200)}deep`],
  ])("keeps 200 levels of %s through every conversion", (_, markdown) => {
    const json = markdownToJson(markdown);
    expect(depthOf(json)).toBeGreaterThanOrEqual(200);
    expectEveryConversionToKeep(json);
  });

  it("keeps 200 levels of HTML lists and quotes", () => {
    const lists = htmlToJson(`${"<ul><li>x".repeat(200)}${"</li></ul>".repeat(200)}`);
    expect(depthOf(lists)).toBe(402);
    expectEveryConversionToKeep(lists);
    const quotes = htmlToJson(`${"<blockquote>".repeat(200)}x`);
    expect(depthOf(quotes)).toBe(202);
    expectEveryConversionToKeep(quotes);
  });

  it("flattens JSON nested deeper than MAX_DEPTH into paragraphs, keeping the text", { timeout: 60_000 }, () => {
    let node: JSONContent = { type: "paragraph", content: [{ type: "text", text: "bottom" }] };
    for (let i = 0; i < 1_000; i++) {
      node = {
        type: "bulletList",
        content: [{ type: "listItem", content: [{ type: "paragraph", content: [{ type: "text", text: `${i}` }] }, node] }],
      };
    }
    const deep: JSONContent = { type: "doc", content: [node] };
    const json = normalizeJson(deep);
    expect(depthOf(json)).toBeLessThanOrEqual(MAX_DEPTH + 2);
    expect(htmlToJson(jsonToHtml(deep))).toEqual(json);
    expect(markdownToJson(jsonToMarkdown(deep))).toEqual(json);
    const lines = jsonToText(json).split("\n");
    expect(lines).toHaveLength(1_001);
    expect(lines[0]).toBe("999");
    expect(lines.at(-1)).toBe("bottom");
    expectEveryConversionToKeep(json);
  });

  // A generous limit like the tests above: a loaded CI machine has taken over 7 s for what takes 3 alone.
  it.each([
    ["Markdown lists", () => markdownToJson(nestedMarkdownList(1_000))],
    ["Markdown quotes", () => markdownToJson(`${"> ".repeat(5_000)}deep`)],
    ["HTML lists", () => htmlToJson(`${"<ul><li>x".repeat(3_000)}${"</li></ul>".repeat(3_000)}`)],
    ["HTML quotes", () => htmlToJson(`${"<blockquote>".repeat(10_000)}deep`)],
  ])("doesn't crash on thousands of levels of %s", { timeout: 60_000 }, (_, convert) => {
    const json = convert();
    expect(depthOf(json)).toBeLessThanOrEqual(MAX_DEPTH + 2);
    expect(jsonToText(json)).toMatch(/deep|level|x/);
  });
});

describe("characters outside the Basic Multilingual Plane", () => {
  const samples = ["😀👍🏽👨‍👩‍👧‍🇺🇳", "中文 日本語 한국어 𠀋𡈽𪚥", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟘𝟙𝟚", "a😀b"];

  it.each(samples)("keeps %s through every conversion", (sample) => {
    const json = markdownToJson(
      `# ${sample}\n\n**${sample}** [${sample}](https://example.com/${encodeURIComponent(sample)})\n\n- [ ] ${sample}\n\n\`\`\`\n${sample}\n\`\`\``,
    );
    expectEveryConversionToKeep(json);
    expect(jsonToText(json)).toBe([sample, `${sample} ${sample}`, sample, sample].join("\n"));
    expect(jsonToText(textToJson(sample))).toBe(sample);
    expect(jsonToText(htmlToJson(`<p>${sample}</p>`))).toBe(sample);
  });
});
