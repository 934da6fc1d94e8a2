import { type Extensions, getSchema, type MarkdownTokenizer } from "@tiptap/core";
import { TaskItem, TaskList } from "@tiptap/extension-list";
import { StarterKit } from "@tiptap/starter-kit";

const ALLOWED_LINK_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

/**
 * Whether a link target may be stored. Only absolute http, https and mailto URLs pass; relative
 * URLs are refused too because a note body is rendered on pages whose base URL we don't control.
 * The WHATWG parser is the one browsers use, so tricks such as "java\tscript:" or leading
 * control characters are judged exactly as a browser would resolve them.
 */
export function isAllowedHref(href: unknown): href is string {
  return typeof href === "string" && URL.canParse(href) && ALLOWED_LINK_PROTOCOLS.has(new URL(href).protocol);
}

const TASK_LIST_WINDOW_LINES = 64;

/**
 * TaskList's Markdown tokenizer is offered every block of the document and splits the *whole*
 * remaining source into lines each time, which makes parsing quadratic (a 400 kB note took 11 s).
 * The wrapper hands it only a window of lines, doubling the window while the list could continue
 * past its end. The tokenizer's decisions only look ahead to the next non-blank line, so a result
 * followed by a non-blank line inside the window is the same as it would be on the full source.
 */
function windowed(tokenizer: MarkdownTokenizer): MarkdownTokenizer {
  const { start } = tokenizer;
  return {
    ...tokenizer,
    tokenize(src, tokens, lexer) {
      // Most blocks aren't task lists; `start` (a superset of the item pattern) rules them out cheaply.
      if (typeof start === "function" && start(src) !== 0) return undefined;
      for (let lines = TASK_LIST_WINDOW_LINES; ; lines *= 2) {
        const end = indexAfterLines(src, lines);
        const window = end === -1 ? src : src.slice(0, end);
        const token = tokenizer.tokenize(window, tokens, lexer);
        if (end === -1 || window.slice(token?.raw?.length ?? 0).trim() !== "") return token;
      }
    },
  };
}

/** Index just past the `count`-th newline of `text`, or -1 if it has fewer lines. */
function indexAfterLines(text: string, count: number): number {
  let index = -1;
  for (let line = 0; line < count; line++) {
    index = text.indexOf("\n", index + 1);
    if (index === -1) return -1;
  }
  return index + 1;
}

const taskListTokenizer = TaskList.config.markdownTokenizer;
if (!taskListTokenizer) throw new Error("@tiptap/extension-list TaskList no longer has a Markdown tokenizer");

/**
 * The note schema. StarterKit brings paragraphs, headings 1-6, bullet/ordered lists, code blocks,
 * blockquotes, horizontal rules, hard breaks and the bold/italic/strike/code/underline/link marks;
 * TaskList/TaskItem add checklists, whose items may nest any block, like list items, so nested
 * checklists from Markdown keep their structure. Links accept only isAllowedHref targets, in
 * parsed HTML and in editors using these extensions alike. Underline stays: @tiptap/markdown
 * writes it as `<u>…</u>` and reads that back, so it survives every format. UndoRedo is off
 * because collaborative editors must use Yjs' undo manager instead. TrailingNode is off because it
 * appends an empty paragraph to any body that ends in another block (a list, a quote) as soon as
 * an editor opens it: with the collaboration binding, merely opening a note would change it and
 * sync that change. The other StarterKit members (dropcursor, gapcursor, list keymap) are editor
 * plugins that change neither the schema nor these conversions.
 */
export const noteExtensions: Extensions = [
  StarterKit.configure({ undoRedo: false, trailingNode: false, link: { isAllowedUri: (url) => isAllowedHref(url) } }),
  TaskList.extend({ markdownTokenizer: windowed(taskListTokenizer) }),
  TaskItem.configure({ nested: true }),
];

export const noteSchema = getSchema(noteExtensions);
