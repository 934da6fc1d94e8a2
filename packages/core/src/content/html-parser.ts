import { createRequire } from "node:module";
import { DOMParser, type Node as PMNode } from "@tiptap/pm/model";
import { noteSchema } from "./schema";

type HappyDom = typeof import("happy-dom");

let happyDom: HappyDom | undefined;

/**
 * happy-dom, loaded at the first HTML parse rather than at start: it is hundreds of modules and
 * tens of MB that a server answering no HTML import never needs. Synchronously (require of an ES
 * module, Node 22.12+), as parsing is synchronous. Resolved from @tandem/core's own folder, where
 * npm installs core's dependencies, even when this code runs bundled elsewhere (the server's
 * dist/); from this file's place when core is not installed as a package (a bundle that carries it).
 */
function loadHappyDom(): HappyDom {
  if (happyDom) return happyDom;
  const here = createRequire(import.meta.url);
  let fromCore: NodeJS.Require;
  try {
    fromCore = createRequire(here.resolve("@tandem/core"));
  } catch {
    fromCore = here;
  }
  happyDom = fromCore("happy-dom") as HappyDom;
  return happyDom;
}

/**
 * ProseMirror's parser skips scripts, styles, `<head>`, `<title>`, `<noscript>` and `<object>`, but
 * keeps the text of any other element it has no rule for. That is right for `<span>` or
 * `<section>`, but an iframe's or template's text is fallback markup nobody sees, not content.
 */
const IGNORED_ELEMENTS = ["iframe", "frame", "frameset", "template", "embed"];

// Last, as no schema rule matches these anyway: every element is tested against the rules in order.
const parser = new DOMParser(noteSchema, [
  ...DOMParser.fromSchema(noteSchema).rules,
  ...IGNORED_ELEMENTS.map((tag) => ({ tag, ignore: true })),
]);

/**
 * Parse HTML into a note document with ProseMirror's DOMParser, which fits any markup into the
 * schema: only elements and attributes with a parse rule survive (so event handlers, styles and
 * unknown tags vanish while their text stays), the Link rule refuses javascript:, data: and other
 * hrefs, and broken HTML is repaired by the HTML parser as a browser would.
 *
 * The server has no DOM, and installing happy-dom's `window`/`document` as globals would leak
 * into everything else in the process, so each call gets a private window (about 2 ms) that is
 * closed afterwards. Scripts, stylesheets and frames are never loaded or run.
 */
export function parseHtml(html: string): PMNode {
  const window = new (loadHappyDom().Window)({
    settings: {
      disableJavaScriptEvaluation: true,
      disableJavaScriptFileLoading: true,
      disableCSSFileLoading: true,
      disableIframePageLoading: true,
      disableComputedStyleRendering: true,
    },
  });
  try {
    const body = window.document.createElement("body");
    body.innerHTML = html;
    return parser.parse(body as never);
  } finally {
    // Nothing was started in this window, so there is nothing to wait for.
    void window.happyDOM.close();
  }
}
