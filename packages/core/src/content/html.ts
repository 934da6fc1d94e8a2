import type { JSONContent } from "@tiptap/core";
import { parseHtml } from "./html-parser";
import { fragmentToHtml } from "./html-writer";
import { normalizeJson, toNoteNode } from "./normalize";
import { parseOrLiteral } from "./text";

/** Sanitising HTML import; see parseHtml for what survives. */
export function htmlToJson(html: string): JSONContent {
  // The link rule refuses bad hrefs, but only the normaliser strips class/target/rel from links.
  return parseOrLiteral(html, (source) => normalizeJson(parseHtml(source).toJSON()));
}

export function jsonToHtml(json: JSONContent): string {
  return fragmentToHtml(toNoteNode(json).content);
}
