// A remote server's tool list is untrusted input: a tool whose name or schema is unusable (not a
// JSON object schema, huge, absurdly deep) is skipped, with the reason kept for the integration's
// `error`, and the server's other tools stay usable.

import type { RemoteToolSpec } from "./mcp-store";

export const MAX_TOOLS_PER_SERVER = 100;
const MAX_SCHEMA_BYTES = 16 * 1024;
const MAX_SCHEMA_DEPTH = 12;
const MAX_DESCRIPTION_CHARS = 1000;
/** What models accept as a tool name, and what `POST /tools` can name after a dot. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function depth(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depth(item));
  return deepest + 1;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** One listed tool as we keep it, or why it is skipped. */
export function vetRemoteTool(raw: unknown): { ok: true; tool: RemoteToolSpec } | { ok: false; name: string; reason: string } {
  const name = isObject(raw) && typeof raw.name === "string" ? raw.name : "";
  const shown = name.slice(0, 64) || "(unnamed)";
  if (!isObject(raw) || !TOOL_NAME.test(name)) return { ok: false, name: shown, reason: "its name is not 1-64 letters, digits, _ or -" };
  const schema = raw.inputSchema;
  if (!isObject(schema) || schema.type !== "object")
    return { ok: false, name, reason: 'its inputSchema is not a JSON Schema of type "object"' };
  if (schema.properties !== undefined && !isObject(schema.properties))
    return { ok: false, name, reason: "its inputSchema's properties is not an object" };
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === "string"))) {
    return { ok: false, name, reason: "its inputSchema's required is not a list of names" };
  }
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_SCHEMA_BYTES)
    return { ok: false, name, reason: `its inputSchema is larger than ${MAX_SCHEMA_BYTES} bytes` };
  if (depth(schema) > MAX_SCHEMA_DEPTH) return { ok: false, name, reason: `its inputSchema nests deeper than ${MAX_SCHEMA_DEPTH} levels` };
  const description = typeof raw.description === "string" ? raw.description.slice(0, MAX_DESCRIPTION_CHARS) : "";
  const annotations = isObject(raw.annotations) ? raw.annotations : {};
  // Only a server's explicit promise makes a tool a reader; anything else may change things.
  const readWrite = annotations.readOnlyHint === true ? "read" : "write";
  return { ok: true, tool: { name, description, inputSchema: schema, readWrite } };
}

/** The tools kept from a listing, and a sentence on those skipped (null when none were). */
export function vetToolList(rawTools: readonly unknown[]): { tools: RemoteToolSpec[]; skipped: string | null } {
  const tools: RemoteToolSpec[] = [];
  const reasons: string[] = [];
  const seen = new Set<string>();
  for (const raw of rawTools) {
    const vetted = vetRemoteTool(raw);
    if (!vetted.ok) reasons.push(`${vetted.name}: ${vetted.reason}`);
    else if (seen.has(vetted.tool.name)) reasons.push(`${vetted.tool.name}: listed twice`);
    else if (tools.length >= MAX_TOOLS_PER_SERVER) reasons.push(`${vetted.tool.name}: more than ${MAX_TOOLS_PER_SERVER} tools`);
    else {
      seen.add(vetted.tool.name);
      tools.push(vetted.tool);
    }
  }
  const skipped =
    reasons.length === 0
      ? null
      : `skipped ${reasons.length} tool${reasons.length > 1 ? "s" : ""}: ${reasons.slice(0, 10).join("; ")}`.slice(0, 2000);
  return { tools, skipped };
}
