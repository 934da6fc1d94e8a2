import type { JSONContent } from "@tiptap/core";
import { marked } from "marked";
import { describe, expect, it } from "vitest";
import { jsonToHtml } from "./html";
import { jsonToMarkdown, markdownToJson } from "./markdown";
import { SAMPLE_MARKDOWN } from "./test-fixtures";
import { jsonToText, textToJson } from "./text";

const EMPTY_DOC = { type: "doc", content: [{ type: "paragraph" }] };

/** Every node of `json` of the given type, in document order. */
function nodesOfType(json: JSONContent, type: string): JSONContent[] {
  return [...(json.type === type ? [json] : []), ...(json.content ?? []).flatMap((child) => nodesOfType(child, type))];
}

describe("markdownToJson / jsonToMarkdown", () => {
  it("round trips every part of the schema character for character", () => {
    expect(jsonToMarkdown(markdownToJson(SAMPLE_MARKDOWN))).toBe(SAMPLE_MARKDOWN);
  });

  it("reads the structure into the schema", () => {
    const json = markdownToJson(SAMPLE_MARKDOWN);
    expect(nodesOfType(json, "heading").map((node) => node.attrs?.level)).toEqual([1, 2, 6]);
    expect(nodesOfType(json, "bulletList")).toHaveLength(2);
    expect(nodesOfType(json, "orderedList")).toHaveLength(2);
    expect(nodesOfType(json, "taskItem").map((node) => node.attrs?.checked)).toEqual([false, true, false]);
    expect(nodesOfType(json, "codeBlock")[0]?.attrs).toEqual({ language: "ts" });
    expect(nodesOfType(json, "blockquote")[0]?.content).toHaveLength(2);
    expect(nodesOfType(json, "horizontalRule")).toHaveLength(1);
    expect(nodesOfType(json, "hardBreak")).toHaveLength(1);
    const marks = nodesOfType(json, "text").flatMap((node) => node.marks ?? []);
    expect(new Set(marks.map((mark) => mark.type))).toEqual(new Set(["italic", "bold", "strike", "code", "underline", "link"]));
    expect(marks.filter((mark) => mark.type === "link").map((mark) => mark.attrs?.href)).toEqual([
      "https://example.com/path?q=1",
      "mailto:someone@example.com",
    ]);
  });

  it("gives an empty document for empty or blank input", () => {
    expect(markdownToJson("")).toEqual(EMPTY_DOC);
    expect(markdownToJson("   \n\n")).toEqual(EMPTY_DOC);
    expect(jsonToMarkdown(EMPTY_DOC)).toBe("");
  });

  it.each([
    ["javascript:", "[click](javascript:alert(1))"],
    ["data:", "[click](data:text/html;base64,PHNjcmlwdD4=)"],
    ["vbscript:", "[click](vbscript:msgbox)"],
    ["a relative URL", "[click](/notes/1)"],
    ["an obfuscated javascript:", "[click](java%0Ascript:alert(1))"],
  ])("drops a link to %s but keeps its text", (_, markdown) => {
    const json = markdownToJson(markdown);
    expect(json).toEqual({ type: "doc", content: [{ type: "paragraph", content: [{ type: "text", text: "click" }] }] });
    expect(jsonToMarkdown(json)).toBe("click");
  });

  it("keeps raw HTML as literal text, escaped again on the way out", () => {
    const json = markdownToJson('<script>alert("x")</script>\n\nInline <img src=x onerror=alert(1)> html');
    expect(jsonToText(json)).toBe('<script>alert("x")</script>\nInline <img src=x onerror=alert(1)> html');
    const html = jsonToHtml(json);
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;");
  });

  it("keeps the text and formatting of tables, one paragraph per row", () => {
    const json = markdownToJson("| Name | **Link** |\n| --- | :-: |\n| a | [x](https://x.example) |");
    expect(jsonToText(json)).toBe("Name | Link\na | x");
    expect(jsonToMarkdown(json)).toBe("Name | **Link**\n\na | [x](https://x.example)");
    expect(markdownToJson(jsonToMarkdown(json))).toEqual(json);
  });

  it.each([
    "# not a heading",
    "###### nor this",
    "- not a list",
    "+ not a list",
    "* not a list",
    "1. not a list",
    "12) not a list",
    "> not a quote",
    "---",
    "a\n===",
    "a | b\n--- | ---",
    "    not code",
    "\tnot code",
    "```",
    "~~~",
    "*not* _emphasis_ `code` [a](b) ~~x~~ ![c](d)",
    "<b>not html</b> &amp; &lt; entities",
    "back\\slash and \\*escapes\\*",
    "#hashtag -dash 1.5 +plus",
    "&copy; &#169; &#xA9; written out",
    "<!-- not a comment --> <ab:not-an-autolink> </p>",
  ])("keeps text that looks like Markdown literal: %j", (text) => {
    const json = textToJson(text);
    expect(markdownToJson(jsonToMarkdown(json))).toEqual(json);
  });

  it.each([
    ["Wilson & Partners", "Wilson & Partners"],
    ["under <$200, over >$100", "under <$200, over >$100"],
    ["3 < 4 && 5 > 2", "3 < 4 && 5 > 2"],
    ["a <b>tag</b> and &amp; as written", "a \\<b>tag\\</b> and \\&amp; as written"],
    ["> at a line start", "\\> at a line start"],
  ])("writes text as written, escaping only what Markdown reads differently: %j", (text, markdown) => {
    const json = textToJson(text);
    expect(jsonToMarkdown(json)).toBe(markdown);
    expect(markdownToJson(markdown)).toEqual(json);
  });

  it("keeps code raw", () => {
    const markdown = "`a < b && c > d` and\n\n```\nif (a < b && c > d) {}\n```";
    expect(jsonToMarkdown(markdownToJson(markdown))).toBe(markdown);
  });

  it("links bare URLs in text, as GitHub-flavoured Markdown does", () => {
    const json = markdownToJson(jsonToMarkdown(textToJson("see https://example.com/a")));
    expect(json.content?.[0]?.content?.[1]?.marks?.[0]?.attrs?.href).toBe("https://example.com/a");
  });

  it("reads text escaped in the source as text", () => {
    expect(jsonToText(markdownToJson("\\# not a heading\n\n1\\. not a list"))).toBe("# not a heading\n1. not a list");
  });

  it("leaves marked's shared instance alone", () => {
    markdownToJson("- [ ] a task");
    expect(marked.lexer("- [ ] a task")[0]?.type).toBe("list");
    expect(marked.defaults.extensions).toBeNull();
  });
});
