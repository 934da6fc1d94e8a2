import { escapeHtml } from "../http/escape-html";

type Json = Record<string, unknown>;

function schemaBlock(schema: unknown): string {
  return `<pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`;
}

/**
 * A value the schema accepts, for examples: its example, const, default or first enum value when it
 * has one, otherwise the simplest value of its type (the required fields of an object, and one optional
 * field when none is required, so a PATCH example changes something; arrays get one item).
 */
function sampleValue(schema: Json | undefined): unknown {
  if (!schema) return null;
  const examples = schema.examples as unknown[] | undefined;
  if (examples?.length) return examples[0];
  for (const key of ["example", "const", "default"]) if (key in schema) return schema[key];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const alternatives = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (alternatives) return sampleValue(alternatives.find((option) => option.type !== "null") ?? alternatives[0]);
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== "null") : (schema.type as string | undefined);
  switch (type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      const required = (schema.required ?? []) as string[];
      const names = required.length ? required : Object.keys(properties).slice(0, 1);
      return Object.fromEntries(names.map((name) => [name, sampleValue(properties[name])]));
    }
    case "array":
      return schema.items ? [sampleValue(schema.items as Json)] : [];
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return true;
    case "string":
      if (schema.format === "date-time") return "2026-01-01T09:00:00.000Z";
      if (schema.format === "date") return "2026-01-01";
      return "text";
    default:
      return null;
  }
}

const CREDENTIAL_VARIABLE: Record<string, string> = { user: "TANDEM_API_KEY", any: "TANDEM_API_KEY", device: "TANDEM_DEVICE_TOKEN" };

/** A curl command line for one operation, with sample values for its path, required query and body. */
function curlExample(basePath: string, path: string, method: string, operation: Json): string {
  const parameters = operation.parameters as Json[];
  const sample = (parameter: Json) => encodeURIComponent(String(sampleValue(parameter.schema as Json)));
  let url = path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const parameter = parameters.find((p) => p.in === "path" && p.name === name);
    return parameter ? sample(parameter) : name;
  });
  const query = parameters.filter((p) => p.in === "query" && p.required).map((p) => `${encodeURIComponent(String(p.name))}=${sample(p)}`);
  if (query.length) url += `?${query.join("&")}`;
  const lines = [`curl${method === "get" ? "" : ` -X ${method.toUpperCase()}`} "$TANDEM_URL${basePath}${url}"`];
  const variable = CREDENTIAL_VARIABLE[String(operation["x-credential"])];
  if (variable) lines.push(`-H "Authorization: Bearer $${variable}"`);
  const body = operation.requestBody as { content: { "application/json": { schema: Json } } } | undefined;
  if (body) {
    // Single quotes keep the shell out of the JSON; a quote inside it is closed, escaped and reopened.
    const json = JSON.stringify(sampleValue(body.content["application/json"].schema)).replaceAll("'", "'\\''");
    lines.push(`-H "Content-Type: application/json" -d '${json}'`);
  }
  return lines.join(" \\\n  ");
}

/**
 * A self-contained HTML reference rendered from the OpenAPI document: no scripts, no CDN, so it
 * works on an offline server and cannot drift from the routes.
 */
export function renderApiReference(document: Json): string {
  const info = document.info as { title: string; description: string; version: string };
  // Paths in the document are relative to its server URL (the API's base path); the page shows them whole.
  const basePath = (document.servers as { url: string }[] | undefined)?.[0]?.url ?? "";
  const paths = document.paths as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  for (const [path, { servers, ...operations }] of Object.entries(paths)) {
    // A path outside the base (A2A, at the root) names its own server.
    const pathBase = (servers as { url: string }[] | undefined)?.[0]?.url.replace(/\/$/, "") ?? basePath;
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
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(pathBase + path)}</code> ${credential} ${scope}</h3>
<p>${escapeHtml(String(operation.summary))}</p>
<pre class="curl">${escapeHtml(curlExample(pathBase, path, method, operation))}</pre>
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
pre{background:#f6f6f8;padding:.75rem;overflow:auto;font-size:.8rem}pre.curl{background:#eef3fb}
</style></head><body>
<h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1>
<p>${escapeHtml(info.description)}</p>
<p>Machine-readable: <a href="openapi.json">openapi.json</a>. Authenticate with <code>Authorization: Bearer &lt;key&gt;</code>.
Every path below is complete; the examples take the server's address and your credential from the shell, with
sample values where an id or a field goes:</p>
<pre>export TANDEM_URL=http://127.0.0.1:8787    # this server's address
export TANDEM_API_KEY=svc_sk_…              # from: npx tandem-server users add &lt;username&gt;
export TANDEM_DEVICE_TOKEN=svc_dev_…        # a bridge's device token, for the runtime routes</pre>
<nav>${toc}</nav>
${sections}
</body></html>`;
}
