import type { JSONContent } from "@tiptap/core";
import { htmlToJson } from "./html";
import { markdownToJson } from "./markdown";

/**
 * Block-level HTML: a note's HTML has at least one such element (every paragraph is a `<p>`). Text
 * without any is not HTML, whatever inline tags or `<` it contains.
 */
const BLOCK_TAG =
  /<(?:address|article|aside|blockquote|details|div|dl|dd|dt|figure|footer|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|ul)(?=[\s/>])/i;

/** Whether `content` is HTML as `PATCH /os/notes/{id}` reads it: it holds block-level markup. */
export function isBlockHtml(content: string): boolean {
  return BLOCK_TAG.test(content);
}

/**
 * The content of a note update. The interface says HTML, but many clients send Markdown: content
 * with block-level markup is read as HTML, anything else as Markdown, so `# Title` and `**bold**`
 * render and real HTML keeps working (docs/api.md).
 */
export function updateContentToJson(content: string): JSONContent {
  return isBlockHtml(content) ? htmlToJson(content) : markdownToJson(content);
}
