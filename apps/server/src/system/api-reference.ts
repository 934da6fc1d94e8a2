type Json = Record<string, unknown>;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

function schemaBlock(schema: unknown): string {
  return `<pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`;
}

/**
 * A self-contained HTML reference rendered from the OpenAPI document: no scripts, no CDN, so it
 * works on an offline server and cannot drift from the routes.
 */
export function renderApiReference(document: Json): string {
  const info = document.info as { title: string; description: string; version: string };
  const paths = document.paths as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const tag = (operation.tags as string[])[0] ?? "other";
      const parameters = (operation.parameters as Json[]).map(
        (p) =>
          `<li><code>${escapeHtml(String(p.name))}</code> (${escapeHtml(String(p.in))}${p.required ? ", required" : ""})${p.description ? ` — ${escapeHtml(String(p.description))}` : ""}</li>`,
      );
      const body = operation.requestBody as { content: { "application/json": { schema: unknown } } } | undefined;
      const success = Object.entries(operation.responses as Record<string, { content?: Record<string, { schema: unknown }> }>).find(([s]) =>
        s.startsWith("2"),
      );
      // JSON for most routes; an event stream documents one event's `data:`.
      const [mediaType, successBody] = Object.entries(success?.[1].content ?? {})[0] ?? [];
      const scopes = [operation["x-required-scope"], ...((operation["x-also-required-scopes"] as unknown[] | undefined) ?? [])].filter(
        Boolean,
      );
      const scope = scopes.map((name) => `<span class="scope">${escapeHtml(String(name))}</span>`).join(" ");
      const credential = `<span class="auth">${escapeHtml(String(operation["x-credential"]))}</span>`;
      const section = `<section id="${escapeHtml(String(operation.operationId))}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code> ${credential} ${scope}</h3>
<p>${escapeHtml(String(operation.summary))}</p>
${parameters.length ? `<h4>Parameters</h4><ul>${parameters.join("")}</ul>` : ""}
${body ? `<details><summary>Request body</summary>${schemaBlock(body.content["application/json"].schema)}</details>` : ""}
${success && successBody && mediaType !== "text/html" ? `<details><summary>Response ${success[0]}${mediaType === "application/json" ? "" : ` (${escapeHtml(mediaType ?? "")})`}</summary>${schemaBlock(successBody.schema)}</details>` : ""}
</section>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), section]);
    }
  }
  const toc = [...byTag.keys()].map((tag) => `<a href="#tag-${escapeHtml(tag)}">${escapeHtml(tag)}</a>`).join(" · ");
  const sections = [...byTag.entries()]
    .map(([tag, items]) => `<h2 id="tag-${escapeHtml(tag)}">${escapeHtml(tag)}</h2>${items.join("\n")}`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h2{border-bottom:1px solid #ddd;margin-top:2.5rem}section{margin:1.5rem 0}
.method{display:inline-block;min-width:4.5rem;text-align:center;border-radius:4px;color:#fff;font-size:.8rem;padding:.1rem .4rem}
.get{background:#2f7d32}.post{background:#1565c0}.patch,.put{background:#ef6c00}.delete{background:#c62828}
.scope,.auth{font-size:.75rem;border:1px solid #bbb;border-radius:4px;padding:0 .3rem;color:#555}
pre{background:#f6f6f8;padding:.75rem;overflow:auto;font-size:.8rem}
</style></head><body>
<h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1>
<p>${escapeHtml(info.description)}</p>
<p>Machine-readable: <a href="openapi.json">openapi.json</a>. Authenticate with <code>Authorization: Bearer &lt;key&gt;</code>.</p>
<nav>${toc}</nav>
${sections}
</body></html>`;
}
