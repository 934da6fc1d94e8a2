import { describe, expect, it } from "vitest";
import { jsonToHtml } from "./html";
import { isBlockHtml, updateContentToJson } from "./update-content";

describe("updateContentToJson", () => {
  it.each([
    ["<p>Hello</p>", true],
    ["<h1 class='x'>Title</h1><ul><li>a</li></ul>", true],
    ["<DIV>upper case</DIV>", true],
    ["<hr/>", true],
    ["# Title\n\n**bold**", false],
    ["plain text with <b>inline</b> tags and a < b", false],
    ["<pricing> is not a paragraph", false],
    ["", false],
  ])("%j is block HTML: %s", (content, expected) => {
    expect(isBlockHtml(content)).toBe(expected);
  });

  it("reads Markdown as Markdown", () => {
    expect(jsonToHtml(updateContentToJson("# Title\n\nSome **bold** & more"))).toBe(
      "<h1>Title</h1><p>Some <strong>bold</strong> &amp; more</p>",
    );
  });

  it("reads HTML as HTML", () => {
    expect(jsonToHtml(updateContentToJson("<h2>Title</h2><p>**not bold** here</p>"))).toBe("<h2>Title</h2><p>**not bold** here</p>");
  });
});
