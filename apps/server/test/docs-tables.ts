import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { noteRoutes, type RouteDefinition, webhookRoutes } from "@tandem/core";
import { OPENID_SCOPES, RESOURCE_SCOPES } from "../src/oauth/oauth-scopes";

/**
 * The parts of the docs that restate the code, generated from it so they cannot drift: the notes
 * routes table of docs/api.md (from the route table, `packages/core/src/api/notes.ts`), the webhook
 * routes table of docs/webhooks.md and the
 * OAuth scope list of docs/oauth.md (from the scopes the server advertises). Each lives between
 * `<!-- docs:tables NAME … -->` and `<!-- /docs:tables NAME -->`; everything outside is prose
 * and left alone. `npm run docs:tables` rewrites the regions; api-reference.test.ts fails while
 * one is out of date. In a route table, the Method, Path and Scope columns and the rows follow the
 * route table; the Notes column is the docs' own (kept per method and path; a new route starts
 * with its `summary`).
 */

const DOCS_DIR = fileURLToPath(new URL("../../../docs/", import.meta.url));

interface Region {
  readonly file: string;
  /** The region's new content from its current one. */
  readonly render: (current: string) => string;
}

const REGIONS: Record<string, Region> = {
  "notes-routes": { file: "api.md", render: (current) => routeTable(Object.values(noteRoutes), current) },
  "oauth-scopes": { file: "oauth.md", render: () => scopeList([...OPENID_SCOPES, ...RESOURCE_SCOPES]) },
  "webhook-routes": { file: "webhooks.md", render: (current) => routeTable(Object.values(webhookRoutes), current) },
};

/** `/os/notes/:id` as the docs write it: `/os/notes/{id}`. */
const docPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

/** What a route needs, as the docs' Scope column says it. */
function scopeCell(route: RouteDefinition): string {
  if (route.auth === "public") return "none";
  if (route.auth === "device") return "device token";
  if (!route.scope) return "any key";
  return [route.scope, ...(route.alsoRequires ?? [])].map((scope) => `\`${scope}\``).join(" and ");
}

/** A Markdown table row's cells (a `\|` inside a cell is part of it). */
function cellsOf(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

function routeTable(routes: readonly RouteDefinition[], current: string): string {
  // The Notes column as the docs have it, by "METHOD path" (the first row wins over a repeat).
  const notes = new Map<string, string>();
  for (const line of current.split("\n").filter((l) => l.trim().startsWith("|"))) {
    const [method = "", path = "", , note = ""] = cellsOf(line);
    const key = `${method} ${path.replace(/^`|`$/g, "")}`;
    if (!notes.has(key)) notes.set(key, note);
  }
  const rows = routes.map((route) => {
    const path = docPath(route.path);
    return [route.method, `\`${path}\``, scopeCell(route), notes.get(`${route.method} ${path}`) || route.summary];
  });
  return alignedTable(["Method", "Path", "Scope", "Notes"], rows);
}

/** A table with its columns padded to one width, as the rest of the docs are laid out. */
function alignedTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

/** The scopes as one code span, wrapped before 115 characters a line. */
function scopeList(scopes: readonly string[]): string {
  const lines: string[] = [];
  let current = "";
  for (const scope of [...new Set(scopes)]) {
    if (current && current.length + scope.length + 1 > 113) {
      lines.push(current);
      current = scope;
    } else current = current ? `${current} ${scope}` : scope;
  }
  lines.push(current);
  return `\`${lines.join("\n")}\``;
}

const regionPattern = (name: string) =>
  new RegExp(`(<!-- docs:tables ${name}\\b[^\\n]*-->\\n)([\\s\\S]*?)\\n?(<!-- /docs:tables ${name} -->)`);

/** Every docs file with regions, as it should read: `{file: [current, generated]}`. */
export function docsTables(): Map<string, { current: string; generated: string }> {
  const files = new Map<string, { current: string; generated: string }>();
  for (const [name, region] of Object.entries(REGIONS)) {
    const path = `${DOCS_DIR}${region.file}`;
    const entry = files.get(path) ?? { current: readFileSync(path, "utf8"), generated: readFileSync(path, "utf8") };
    const pattern = regionPattern(name);
    const found = pattern.exec(entry.generated);
    if (!found)
      throw new Error(`docs/${region.file} has no region "${name}" (<!-- docs:tables ${name} --> … <!-- /docs:tables ${name} -->)`);
    entry.generated = entry.generated.replace(
      pattern,
      (_all, open: string, body: string, close: string) => `${open}${region.render(body)}\n${close}`,
    );
    files.set(path, entry);
  }
  return files;
}

/** The docs files whose generated regions are out of date (none when `npm run docs:tables` has been run). */
export function staleDocs(): string[] {
  return [...docsTables()].filter(([, { current, generated }]) => current !== generated).map(([path]) => path);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [path, { current, generated }] of docsTables()) {
    if (current === generated) continue;
    writeFileSync(path, generated);
    console.log(`Updated ${path}`);
  }
}
