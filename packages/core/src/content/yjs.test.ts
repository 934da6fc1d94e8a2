import type { JSONContent } from "@tiptap/core";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { jsonToHtml } from "./html";
import { jsonToMarkdown, markdownToJson } from "./markdown";
import { MAX_DEPTH } from "./normalize";
import { depthOf, SAMPLE_MARKDOWN } from "./test-fixtures";
import { jsonToText } from "./text";
import { applyStoredState, NOTE_FRAGMENT, readNoteBody, writeNoteBody } from "./yjs";

const paragraphs = (...texts: string[]): JSONContent => ({
  type: "doc",
  content: texts.map((text) => ({ type: "paragraph", content: [{ type: "text", text }] })),
});

/** A second replica of `doc`, as a client that has synced it would hold. */
function replica(doc: Y.Doc): Y.Doc {
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
  return copy;
}

/** Send each side what it lacks, as a sync round would. */
function exchange(a: Y.Doc, b: Y.Doc): void {
  const forB = Y.encodeStateAsUpdate(a, Y.encodeStateVector(b));
  const forA = Y.encodeStateAsUpdate(b, Y.encodeStateVector(a));
  Y.applyUpdate(b, forB);
  Y.applyUpdate(a, forA);
}

function countUpdates(doc: Y.Doc, action: () => void): number {
  let updates = 0;
  const count = () => updates++;
  doc.on("update", count);
  action();
  doc.off("update", count);
  return updates;
}

describe("writeNoteBody / readNoteBody", () => {
  it("gives back exactly what was written", () => {
    const json = markdownToJson(SAMPLE_MARKDOWN);
    const doc = new Y.Doc();
    writeNoteBody(doc, json);
    expect(readNoteBody(doc)).toEqual(json);
    expect(readNoteBody(replica(doc))).toEqual(json);
  });

  it("reads an empty note as one empty paragraph", () => {
    expect(readNoteBody(new Y.Doc())).toEqual({ type: "doc", content: [{ type: "paragraph" }] });
  });

  it("writes in one transaction with the caller's origin", () => {
    const doc = new Y.Doc();
    const origins: unknown[] = [];
    doc.on("afterTransaction", (transaction: Y.Transaction) => origins.push(transaction.origin));
    const origin = { source: "rest" };
    writeNoteBody(doc, markdownToJson(SAMPLE_MARKDOWN), origin);
    expect(origins).toEqual([origin]);
  });

  it("changes nothing when the content is the same", () => {
    const doc = new Y.Doc();
    writeNoteBody(doc, markdownToJson(SAMPLE_MARKDOWN));
    expect(countUpdates(doc, () => writeNoteBody(doc, markdownToJson(SAMPLE_MARKDOWN)))).toBe(0);
  });

  it("keeps the Yjs types of unchanged blocks and edits changed text in place", () => {
    const doc = new Y.Doc();
    writeNoteBody(doc, paragraphs("one", "two", "three"));
    const before = doc.getXmlFragment(NOTE_FRAGMENT).toArray();
    writeNoteBody(doc, paragraphs("one", "two", "three, edited"));
    expect(doc.getXmlFragment(NOTE_FRAGMENT).toArray()).toEqual(before);
    expect(readNoteBody(doc)).toEqual(paragraphs("one", "two", "three, edited"));
  });

  it("replaces the body completely when everything changed", () => {
    const doc = new Y.Doc();
    writeNoteBody(doc, markdownToJson(SAMPLE_MARKDOWN));
    writeNoteBody(doc, markdownToJson("# Other\n\n- [ ] note"));
    expect(jsonToMarkdown(readNoteBody(doc))).toBe("# Other\n\n- [ ] note");
  });

  describe("concurrent edits", () => {
    it("merges an editor's edit to paragraph 1 with a REST write to paragraph 3", () => {
      const a = new Y.Doc();
      writeNoteBody(a, paragraphs("one", "two", "three"));
      const b = replica(a);

      // A: an editor typing into paragraph 1, a plain Yjs edit.
      const firstParagraph = a.getXmlFragment(NOTE_FRAGMENT).get(0) as Y.XmlElement;
      (firstParagraph.get(0) as Y.XmlText).insert(3, " (typed)");
      // B: a REST update whose HTML changed paragraph 3 only.
      writeNoteBody(b, paragraphs("one", "two", "three (from REST)"));

      exchange(a, b);
      expect(readNoteBody(a)).toEqual(paragraphs("one (typed)", "two", "three (from REST)"));
      expect(readNoteBody(b)).toEqual(readNoteBody(a));
    });

    it("merges two REST writes to different paragraphs", () => {
      const a = new Y.Doc();
      writeNoteBody(a, paragraphs("one", "two", "three"));
      const b = replica(a);
      writeNoteBody(a, paragraphs("ONE", "two", "three"));
      writeNoteBody(b, paragraphs("one", "two", "THREE"));
      exchange(a, b);
      expect(readNoteBody(a)).toEqual(paragraphs("ONE", "two", "THREE"));
      expect(readNoteBody(b)).toEqual(readNoteBody(a));
    });

    it("merges edits to different parts of the same paragraph", () => {
      const a = new Y.Doc();
      writeNoteBody(a, paragraphs("the quick fox"));
      const b = replica(a);
      writeNoteBody(a, paragraphs("the quick brown fox"));
      writeNoteBody(b, paragraphs("the quick fox jumps"));
      exchange(a, b);
      expect(readNoteBody(a)).toEqual(paragraphs("the quick brown fox jumps"));
      expect(readNoteBody(b)).toEqual(readNoteBody(a));
    });

    it("merges structural edits: an inserted block, a deleted block and a ticked task", () => {
      const a = new Y.Doc();
      writeNoteBody(a, markdownToJson("# Plan\n\nintro\n\n- [ ] buy milk\n- [ ] call Bob\n\nend"));
      const b = replica(a);
      writeNoteBody(a, markdownToJson("# Plan\n\nnew first line\n\nintro\n\n- [ ] buy milk\n- [ ] call Bob\n\nend"));
      writeNoteBody(b, markdownToJson("# Plan\n\nintro\n\n- [ ] buy milk\n- [x] call Bob"));
      exchange(a, b);
      expect(jsonToMarkdown(readNoteBody(a))).toBe("# Plan\n\nnew first line\n\nintro\n\n- [ ] buy milk\n- [x] call Bob");
      expect(readNoteBody(b)).toEqual(readNoteBody(a));
    });
  });

  describe("content written by other clients", () => {
    it("reads a body that breaks the schema as a valid, safe document, without changing it", () => {
      const doc = new Y.Doc();
      const fragment = doc.getXmlFragment(NOTE_FRAGMENT);
      const script = new Y.XmlElement("script");
      script.insert(0, [new Y.XmlText("kept as text")]);
      const paragraph = new Y.XmlElement("paragraph");
      paragraph.setAttribute("onclick", "alert(1)");
      const link = new Y.XmlText();
      link.insert(0, "bad link", { link: { href: "javascript:alert(1)" } });
      const heading = new Y.XmlElement("heading");
      heading.setAttribute("level", "2" as never);
      heading.insert(0, [new Y.XmlText("heading in a paragraph")]);
      paragraph.insert(0, [link, heading]);
      fragment.insert(0, [new Y.XmlText("loose text"), script, paragraph]);

      const state = Y.encodeStateAsUpdate(doc);
      let json: JSONContent = {};
      expect(countUpdates(doc, () => (json = readNoteBody(doc)))).toBe(0);
      expect(Y.encodeStateAsUpdate(doc)).toEqual(state);
      expect(jsonToText(json)).toBe("loose textkept as text\nbad link\nheading in a paragraph");
      expect(jsonToHtml(json)).not.toMatch(/onclick|javascript|<script/);
    });

    it("writes over a body nested far deeper than recursion allows, and the result loads again", { timeout: 60_000 }, () => {
      const doc = new Y.Doc();
      doc.transact(() => {
        let parent: Y.XmlFragment = doc.getXmlFragment(NOTE_FRAGMENT);
        for (let i = 0; i < 20_000; i++) {
          const quote = new Y.XmlElement("blockquote");
          parent.insert(0, [quote]);
          parent = quote;
        }
      });
      writeNoteBody(doc, { type: "doc", content: [{ type: "paragraph", content: [{ type: "text", text: "fresh" }] }] });
      expect(jsonToText(readNoteBody(doc))).toBe("fresh");
      const reloaded = new Y.Doc();
      applyStoredState(reloaded, Y.encodeStateAsUpdate(doc));
      expect(jsonToText(readNoteBody(reloaded))).toBe("fresh");
    });

    it("reads a body nested far deeper than recursion allows", { timeout: 60_000 }, () => {
      const doc = new Y.Doc();
      doc.transact(() => {
        let parent: Y.XmlFragment = doc.getXmlFragment(NOTE_FRAGMENT);
        for (let i = 0; i < 20_000; i++) {
          const quote = new Y.XmlElement("blockquote");
          parent.insert(0, [quote]);
          parent = quote;
        }
        const bottom = new Y.XmlElement("paragraph");
        bottom.insert(0, [new Y.XmlText("at the bottom")]);
        parent.insert(0, [bottom]);
      });

      const json = readNoteBody(doc);
      expect(jsonToText(json)).toBe("at the bottom");
      expect(depthOf(json)).toBeLessThanOrEqual(MAX_DEPTH + 2);
    });
  });
});
