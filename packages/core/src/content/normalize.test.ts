import type { JSONContent } from "@tiptap/core";
import { describe, expect, it } from "vitest";
import { normalizeJson } from "./normalize";

const text = (value: string, marks?: JSONContent["marks"]) => ({ type: "text", text: value, ...(marks ? { marks } : {}) });

describe("normalizeJson", () => {
  it("unwraps unknown nodes and drops unknown marks, attributes and empty text", () => {
    expect(
      normalizeJson({
        type: "doc",
        content: [
          {
            type: "section",
            content: [{ type: "paragraph", attrs: { style: "x", onclick: "y" }, content: [text(""), text("a", [{ type: "blink" }])] }],
          },
          { type: "heading", attrs: { level: 2, id: "h" }, content: [text("b", [{ type: "bold", attrs: { color: "red" } }])] },
        ],
      }),
    ).toEqual({
      type: "doc",
      content: [
        { type: "paragraph", content: [text("a")] },
        { type: "heading", attrs: { level: 2 }, content: [text("b", [{ type: "bold" }])] },
      ],
    });
  });

  it("keeps only http, https and mailto links, with their href and title", () => {
    const link = (href: string) => ({ type: "link", attrs: { href, class: "x", target: "_top", rel: "opener" } });
    const json = normalizeJson({
      type: "doc",
      content: [
        {
          type: "paragraph",
          content: [text("a", [link("https://a.example")]), text("b", [link("javascript:alert(1)")]), text("c", [link("/relative")])],
        },
      ],
    });
    const defaults = { target: "_blank", rel: "noopener noreferrer nofollow", class: null, title: null };
    expect(json.content?.[0]?.content).toEqual([
      text("a", [{ type: "link", attrs: { ...defaults, href: "https://a.example" } }]),
      text("bc"),
    ]);
  });

  it("refits content the schema doesn't allow instead of rejecting it", () => {
    expect(
      normalizeJson({
        type: "doc",
        content: [
          text("loose text"),
          {
            type: "paragraph",
            content: [
              text("before"),
              { type: "bulletList", content: [{ type: "listItem", content: [{ type: "paragraph", content: [text("item")] }] }] },
            ],
          },
          { type: "codeBlock", content: [text("code", [{ type: "bold" }])] },
        ],
      }),
    ).toEqual({
      type: "doc",
      content: [
        { type: "paragraph", content: [text("loose text")] },
        { type: "paragraph", content: [text("before")] },
        { type: "bulletList", content: [{ type: "listItem", content: [{ type: "paragraph", content: [text("item")] }] }] },
        { type: "codeBlock", attrs: { language: null }, content: [text("code")] },
      ],
    });
  });

  it("wraps a lone node in a document and fills empty nodes", () => {
    expect(normalizeJson({ type: "paragraph", content: [text("x")] })).toEqual({
      type: "doc",
      content: [{ type: "paragraph", content: [text("x")] }],
    });
    expect(normalizeJson({ type: "doc" })).toEqual({ type: "doc", content: [{ type: "paragraph" }] });
    expect(normalizeJson({ type: "doc", content: [{ type: "bulletList" }] })).toEqual({
      type: "doc",
      content: [{ type: "bulletList", content: [{ type: "listItem", content: [{ type: "paragraph" }] }] }],
    });
  });
});
