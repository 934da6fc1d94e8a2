import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { API_BASE_PATH } from "@tandem/core";
import { htmlPageHeaders } from "../http/html-page-headers";
import { SERVER_PACKAGE_DIR } from "../server-files";

/**
 * What a browser shows at `/`: the server's name, version and health, and where to go next (the
 * API reference, the documentation). Static but for the health figures, which are numbers; no
 * script, and its one style block is allowed by hash, so the policy can forbid everything else.
 */

const VERSION = (JSON.parse(readFileSync(path.join(SERVER_PACKAGE_DIR, "package.json"), "utf8")) as { version: string }).version;

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
h1{margin-bottom:0}.version{color:#666;margin-top:0}.ok{color:#1a7f37;font-weight:600}code{font-size:.9em}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{color:#666}dd{margin:0}`;

const HEADERS: Readonly<Record<string, string>> = htmlPageHeaders([
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
]);

export interface HomePage {
  readonly headers: Readonly<Record<string, string>>;
  readonly html: string;
}

export function renderHomePage(health: { documentsOpen: number }): HomePage {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tandem server</title><style>${STYLE}</style></head><body>
<h1>Tandem server</h1>
<p class="version">version ${VERSION}</p>
<dl>
<dt>Health</dt><dd><span class="ok">ok</span>, ${Math.trunc(health.documentsOpen)} document(s) open (<a href="/healthz">/healthz</a>)</dd>
<dt>API</dt><dd><a href="${API_BASE_PATH}/reference">API reference</a> · <a href="${API_BASE_PATH}/openapi.json">OpenAPI document</a> · base URL <code>${API_BASE_PATH}</code></dd>
<dt>Sync</dt><dd>Yjs over WebSocket at <code>/sync</code></dd>
<dt>Documentation</dt><dd>In the <code>docs/</code> folder of the Tandem checkout: <code>api.md</code> (the API),
<code>operating.md</code> (running this server), <code>sync.md</code>, <code>delegation/</code> and <code>desktop/</code>.</dd>
</dl>
<p>To get an API key, run <code>npx tandem-server users add &lt;username&gt;</code> in the checkout, then send it as
<code>Authorization: Bearer &lt;key&gt;</code>.</p>
</body></html>`;
  return { headers: HEADERS, html };
}
