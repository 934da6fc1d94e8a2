/**
 * Headers for the server's own HTML pages (the home page, the pairing approval page): nothing may
 * load or run but what `sources` allows, the page cannot be framed or cached, and it sends no referrer.
 */
export function htmlPageHeaders(sources: readonly string[]): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": ["default-src 'none'", ...sources, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join(
      "; ",
    ),
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
  };
}
