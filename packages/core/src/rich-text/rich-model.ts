/**
 * Formatted text as the app shows it from untrusted sources (the agent's and people's Markdown, the
 * briefing's HTML): a small closed set of blocks and inlines that the desktop's `RichText` turns
 * into React elements and `appendMarkdown` (dom.ts) into DOM elements for the server's guest page.
 * No markup ever reaches a page as HTML, and a link keeps only a web or mail address.
 */
export type Inline =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "strong" | "em" | "del" | "u"; readonly children: readonly Inline[] }
  | { readonly kind: "code"; readonly text: string }
  | { readonly kind: "link"; readonly href: string; readonly children: readonly Inline[] }
  /** An instant (ISO), shown relative to when it is shown ("5 minutes ago"): stored text never says "just now". */
  | { readonly kind: "time"; readonly datetime: string }
  | { readonly kind: "break" };

export type Block =
  | { readonly kind: "paragraph"; readonly children: readonly Inline[] }
  | { readonly kind: "heading"; readonly level: number; readonly children: readonly Inline[] }
  | { readonly kind: "list"; readonly ordered: boolean; readonly start: number; readonly items: readonly (readonly Block[])[] }
  | { readonly kind: "quote"; readonly children: readonly Block[] }
  | { readonly kind: "code"; readonly text: string }
  | { readonly kind: "table"; readonly header: readonly (readonly Inline[])[]; readonly rows: readonly (readonly (readonly Inline[])[])[] }
  | { readonly kind: "rule" };

/** The only link targets kept: web pages and mail addresses (never `javascript:`, `data:`, `file:`…). */
export function safeHref(href: string | null | undefined): string | null {
  if (!href) return null;
  const trimmed = href.trim();
  if (!/^(?:https?:\/\/|mailto:)/i.test(trimmed)) return null;
  try {
    const url = new URL(trimmed);
    return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:" ? url.href : null;
  } catch {
    return null;
  }
}
