import { describe, expect, it } from "vitest";
import { htmlToJson, jsonToHtml } from "./html";
import { jsonToMarkdown, markdownToJson } from "./markdown";
import { SAMPLE_MARKDOWN } from "./test-fixtures";
import { jsonToText } from "./text";

const EMPTY_DOC = { type: "doc", content: [{ type: "paragraph" }] };

/** Everything the schema renders: any other element or attribute in the output is a leak. */
const OUTPUT_ELEMENTS = [
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "label",
  "input",
  "span",
  "div",
  "pre",
  "code",
  "blockquote",
  "hr",
  "br",
  "strong",
  "em",
  "s",
  "u",
  "a",
];
const OUTPUT_ATTRIBUTES = ["href", "title", "target", "rel", "class", "start", "type", "data-type", "data-checked", "checked"];

describe("htmlToJson / jsonToHtml", () => {
  it("round trips every part of the schema", () => {
    const json = markdownToJson(SAMPLE_MARKDOWN);
    const html = jsonToHtml(json);
    expect(htmlToJson(html)).toEqual(json);
    expect(jsonToHtml(htmlToJson(html))).toBe(html);
  });

  it("reads HTML written by hand or by another editor", () => {
    const html = [
      "<h2>Title</h2>",
      '<p><b>bold</b> <i>italic</i> <del>struck</del> <code>code</code> <u>under</u> <a href="https://x.example/a">link</a><br>next</p>',
      "<ul><li>one<ul><li>nested</li></ul></li></ul>",
      '<ol start="3"><li><p>three</p></li></ol>',
      '<ul data-type="taskList"><li data-type="taskItem" data-checked="true"><p>done</p></li><li data-type="taskItem"><p>open</p></li></ul>',
      '<pre><code class="language-python">print("hi")\n</code></pre>',
      "<blockquote><p>quoted</p></blockquote><hr>",
    ].join("");
    const markdown = [
      "## Title",
      "**bold** *italic* ~~struck~~ `code` <u>under</u> [link](https://x.example/a)  \nnext",
      "- one\n  - nested",
      "3. three",
      "- [x] done\n- [ ] open",
      '```python\nprint("hi")\n\n```',
      "> quoted",
      "---",
    ].join("\n\n");
    expect(jsonToMarkdown(htmlToJson(html))).toBe(markdown);
    expect(htmlToJson(jsonToHtml(htmlToJson(html)))).toEqual(htmlToJson(html));
  });

  it("gives an empty document for empty or blank input", () => {
    expect(htmlToJson("")).toEqual(EMPTY_DOC);
    expect(htmlToJson("  \n ")).toEqual(EMPTY_DOC);
    expect(htmlToJson("<p></p><div></div>")).toEqual(EMPTY_DOC);
    expect(jsonToHtml(EMPTY_DOC)).toBe("<p></p>");
  });

  describe("sanitising", () => {
    const attacks = [
      "<script>alert(1)</script><p>visible</p>",
      "<p>visible<script src=https://evil.example/x.js></script></p>",
      "<style>body{display:none}</style><p>visible</p>",
      "<p>visible</p><iframe src=https://evil.example>fallback</iframe>",
      '<iframe srcdoc="<script>alert(1)</script>"></iframe><p>visible</p>',
      "<p onclick=alert(1) style=color:red>visible</p>",
      "<p>visible<img src=x onerror=alert(1)></p>",
      '<p><a href="javascript:alert(1)">visible</a></p>',
      '<p><a href="JaVaScRiPt:alert(1)">visible</a></p>',
      '<p><a href=" javascript:alert(1)">visible</a></p>',
      '<p><a href="java&#x09;script:alert(1)">visible</a></p>',
      '<p><a href="data:text/html,<script>alert(1)</script>">visible</a></p>',
      '<p><a href="https://ok.example" onclick="alert(1)" onmouseover="alert(1)">visible</a></p>',
      "<p>visible</p><svg><script>alert(1)</script><text>x</text></svg>",
      "<math><mi>visible</mi></math><object data=x><embed src=y></object>",
      "<template><script>alert(1)</script></template><p>visible</p>",
      "<noscript><p>hidden</p></noscript><p>visible</p>",
      "<form action=https://evil.example><input value=x><button>visible</button></form>",
      "<details open ontoggle=alert(1)><summary>visible</summary></details>",
      '<p><span style="background:url(javascript:alert(1))">visible</span></p>',
      "<custom-element onload=alert(1)>visible</custom-element>",
    ];
    it.each(attacks)("keeps only safe markup from %s", (html) => {
      const json = htmlToJson(html);
      const out = jsonToHtml(json);
      for (const [, name, attributes = ""] of out.matchAll(/<\/?([a-z0-9]+)([^>]*)>/g)) {
        expect(OUTPUT_ELEMENTS).toContain(name);
        for (const [, attribute] of attributes.matchAll(/\s([^\s=]+)(?:="[^"]*")?/g)) expect(OUTPUT_ATTRIBUTES).toContain(attribute);
      }
      expect(out.toLowerCase()).not.toContain("javascript:");
      expect(out).not.toContain("data:");
      expect(out).not.toContain("alert(1)");
      expect(jsonToText(json)).toContain("visible");
      expect(jsonToText(json)).not.toContain("hidden");
    });

    it("keeps an allowed link, with only its href and title", () => {
      const out = jsonToHtml(
        htmlToJson('<p><a href="https://ok.example/x" title="T" class="app-button" target="_top" rel="opener">ok</a></p>'),
      );
      expect(out).toBe('<p><a target="_blank" rel="noopener noreferrer nofollow" href="https://ok.example/x" title="T">ok</a></p>');
    });

    it("keeps the text of unknown elements", () => {
      expect(jsonToText(htmlToJson("<section><article><span>one</span> <mark>two</mark></article></section><div>three</div>"))).toBe(
        "one two\nthree",
      );
    });

    it("renders disallowed hrefs that reach it as JSON harmlessly", () => {
      const json = {
        type: "doc",
        content: [
          { type: "paragraph", content: [{ type: "text", text: "x", marks: [{ type: "link", attrs: { href: "javascript:alert(1)" } }] }] },
        ],
      };
      expect(jsonToHtml(json)).toBe("<p>x</p>");
    });
  });

  it.each([
    "<p>unclosed <b>bold <i>both",
    "</p></div>stray closers</li>",
    "<<<>>> < p > <p <p>",
    "<ul><li>one<li>two</ul></ol>",
    "<table><tr><td>cell</td></table>",
    "<p title='x>y'>quoted > </p>",
    '<a href="https://x.example">unclosed link',
    "<!-- comment --><!doctype html><html><head><title>t</title></head><body><p>body</p></body></html>",
    "\u0000\uFFFE\uD800 lone surrogate",
  ])("doesn't throw on invalid HTML: %j", (html) => {
    const json = htmlToJson(html);
    expect(json.type).toBe("doc");
    expect(htmlToJson(jsonToHtml(json))).toEqual(json);
  });

  it("escapes text and attributes on output", () => {
    const json = {
      type: "doc",
      content: [
        { type: "paragraph", content: [{ type: "text", text: '<b>"&"</b>\u00a0' }] },
        { type: "codeBlock", attrs: { language: '"><script>' }, content: [{ type: "text", text: "a < b" }] },
      ],
    };
    expect(jsonToHtml(json)).toBe(
      '<p>&lt;b&gt;"&amp;"&lt;/b&gt;&nbsp;</p><pre><code class="language-&quot;&gt;&lt;script&gt;">a &lt; b</code></pre>',
    );
  });

  it("leaves no DOM globals behind", () => {
    htmlToJson("<p>x</p>");
    jsonToHtml(EMPTY_DOC);
    expect("window" in globalThis).toBe(false);
    expect("document" in globalThis).toBe(false);
    expect("DOMParser" in globalThis).toBe(false);
  });
});
