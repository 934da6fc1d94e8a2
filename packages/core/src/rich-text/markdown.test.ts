import { Window } from "happy-dom";
import { describe, expect, it } from "vitest";
import { appendMarkdown, type RichDocument } from "./dom";
import { parseInline, parseMarkdown } from "./markdown";

const text = (value: string) => ({ kind: "text", text: value });

describe("the agent's Markdown", () => {
  it("reads paragraphs, keeping a line break as one", () => {
    expect(parseMarkdown("The launch is on **March 3**.\nSources: “Project Atlas”\n\nNext.")).toEqual([
      {
        kind: "paragraph",
        children: [
          text("The launch is on "),
          { kind: "strong", children: [text("March 3")] },
          text("."),
          { kind: "break" },
          text("Sources: “Project Atlas”"),
        ],
      },
      { kind: "paragraph", children: [text("Next.")] },
    ]);
  });

  it("reads headings, rules, quotes and fenced code (unclosed fences run to the end)", () => {
    expect(parseMarkdown("## Plan ##\n---\n> quoted *text*\n```ts\nconst a = 1 < 2;\n```\n~~~\nstill <b>code")).toEqual([
      { kind: "heading", level: 2, children: [text("Plan")] },
      { kind: "rule" },
      { kind: "quote", children: [{ kind: "paragraph", children: [text("quoted "), { kind: "em", children: [text("text")] }] }] },
      { kind: "code", text: "const a = 1 < 2;" },
      { kind: "code", text: "still <b>code" },
    ]);
  });

  it("reads bullet and numbered lists, nested by indentation", () => {
    const blocks = parseMarkdown("Todo:\n- one\n- two\n  - two a\n  - two b\n- three\n\n3. third\n4. fourth");
    expect(blocks).toEqual([
      { kind: "paragraph", children: [text("Todo:")] },
      {
        kind: "list",
        ordered: false,
        start: 1,
        items: [
          [{ kind: "paragraph", children: [text("one")] }],
          [
            { kind: "paragraph", children: [text("two")] },
            {
              kind: "list",
              ordered: false,
              start: 1,
              items: [[{ kind: "paragraph", children: [text("two a")] }], [{ kind: "paragraph", children: [text("two b")] }]],
            },
          ],
          [{ kind: "paragraph", children: [text("three")] }],
        ],
      },
      {
        kind: "list",
        ordered: true,
        start: 3,
        items: [[{ kind: "paragraph", children: [text("third")] }], [{ kind: "paragraph", children: [text("fourth")] }]],
      },
    ]);
  });

  it("reads GitHub tables", () => {
    expect(parseMarkdown("| Task | Due |\n|---|:-:|\n| Ship | `Mar 3` |")).toEqual([
      {
        kind: "table",
        header: [[text("Task")], [text("Due")]],
        rows: [[[text("Ship")], [{ kind: "code", text: "Mar 3" }]]],
      },
    ]);
  });

  it("keeps raw HTML as text and images as their alt text", () => {
    expect(parseInline('<img src=x onerror="alert(1)"> ![a chart](https://example.com/x.png) <b>x</b>')).toEqual([
      text('<img src=x onerror="alert(1)"> '),
      text("a chart"),
      text(" <b>x</b>"),
    ]);
  });

  it("links only web and mail addresses", () => {
    expect(parseInline("[site](https://example.com/a_(b)) [bad](javascript:alert(1)) <mailto:a@b.c> see https://x.org/p.")).toEqual([
      { kind: "link", href: "https://example.com/a_(b)", children: [text("site")] },
      text(" "),
      text("bad"),
      text(" "),
      { kind: "link", href: "mailto:a@b.c", children: [text("mailto:a@b.c")] },
      text(" see "),
      { kind: "link", href: "https://x.org/p", children: [text("https://x.org/p")] },
      text("."),
    ]);
  });

  it("reads emphasis as people write it, and leaves snake_case and half-written markers alone", () => {
    expect(parseInline("*a **b** c* ~~gone~~ search_notes_tool __strong__ **unclosed")).toEqual([
      { kind: "em", children: [text("a "), { kind: "strong", children: [text("b")] }, text(" c")] },
      text(" "),
      { kind: "del", children: [text("gone")] },
      text(" search_notes_tool "),
      { kind: "strong", children: [text("strong")] },
      text(" **unclosed"),
    ]);
    expect(parseInline("2 * 3 * 4 and \\*literal\\*")).toEqual([text("2 * 3 * 4 and *literal*")]);
  });

  it("stays fast and bounded on hostile input", () => {
    const started = performance.now();
    parseMarkdown(`${"*_[(".repeat(20_000)}\n${"> ".repeat(5_000)}deep\n${"- ".repeat(2_000)}x`);
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

describe("the Markdown as DOM elements (the guest page's renderer)", () => {
  it("makes elements one by one: markup stays text, links keep only checked addresses and open in a new tab", () => {
    const { document } = new Window();
    const parent = document.createElement("div");
    const markdown =
      "# Plan\n\n**Q1 plan** <img src=x onerror=alert(1)> [site](https://example.com) [bad](javascript:alert(1))\n\n- one\n- two";
    appendMarkdown(document as unknown as RichDocument, parent, markdown);
    expect(parent.innerHTML).toBe(
      "<h3>Plan</h3><p><strong>Q1 plan</strong> &lt;img src=x onerror=alert(1)&gt; " +
        '<a href="https://example.com/" target="_blank" rel="noopener noreferrer nofollow">site</a> bad</p>' +
        "<ul><li>one</li><li>two</li></ul>",
    );
  });
});
