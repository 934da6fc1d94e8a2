import { z } from "zod";
import { a2aOpenApiPaths } from "./a2a-openapi";
import { routes } from "./api";
import { ErrorBody } from "./api/common";
import type { RouteDefinition } from "./api/route";

export const API_BASE_PATH = "/api/v1";

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

/** `/os/notes/:id` → `/os/notes/{id}` */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
}

function parameters(route: RouteDefinition): JsonSchema[] {
  const result: JsonSchema[] = [];
  for (const [location, schema] of [
    ["path", route.params],
    ["query", route.query],
  ] as const) {
    if (!schema) continue;
    const object = jsonSchema(schema, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      result.push({
        name,
        in: location,
        required: location === "path" || (object.required ?? []).includes(name),
        schema: property,
        ...(typeof property.description === "string" ? { description: property.description } : {}),
      });
    }
  }
  return result;
}

const ERROR_RESPONSES: Record<string, string> = {
  "400": "Malformed JSON or a field that fails validation",
  "401": "Missing or invalid credential",
  "403": "The credential lacks the required scope (insufficient_scope)",
  "404": "Unknown object, or one owned by someone else",
  "413": "Body larger than the route accepts",
  "429": "Rate limit exceeded; see Retry-After",
};

/** The OpenAPI 3.1 document for every route in the table. */
export function buildOpenApiDocument(serverUrl = API_BASE_PATH): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const [operationId, route] of Object.entries(routes) as [string, RouteDefinition][]) {
    const responses: Record<string, JsonSchema> = {};
    const contentType = route.responseMediaType ?? (route.response instanceof z.ZodString ? "text/html" : "application/json");
    for (const status of route.successStatuses ?? [200]) {
      responses[String(status)] = {
        description: status === 201 ? "Created" : "Success",
        content: {
          [contentType]: { schema: jsonSchema(route.response, "output") },
          ...(route.jsonResponse ? { "application/json": { schema: jsonSchema(route.jsonResponse, "output") } } : {}),
        },
      };
    }
    for (const [status, description] of Object.entries(ERROR_RESPONSES)) {
      if (route.auth === "public" && (status === "401" || status === "403" || status === "429")) continue;
      responses[status] = { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
    }
    const operation: JsonSchema = {
      operationId,
      summary: route.summary,
      tags: [route.category],
      parameters: parameters(route),
      responses,
      security: route.auth === "public" ? [] : [{ bearer: [] }, { apiKeyHeader: [] }],
      ...(route.scope ? { "x-required-scope": route.scope } : {}),
      ...(route.alsoRequires ? { "x-also-required-scopes": route.alsoRequires } : {}),
      "x-credential": route.auth,
    };
    if (route.body) {
      operation.requestBody = {
        required: !route.body.safeParse(undefined).success,
        content: { "application/json": { schema: jsonSchema(route.body, "input") } },
      };
    }
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Tandem v1 API",
      version: "1.0.0",
      description: "Workspace and delegation API of a Tandem server. Every error body is {success:false, error, message}.",
    },
    servers: [{ url: serverUrl }],
    // A2A lives at the server's root, outside the v1 base: those paths name their own server.
    paths: { ...paths, ...a2aOpenApiPaths(serverUrl.endsWith(API_BASE_PATH) ? serverUrl.slice(0, -API_BASE_PATH.length) || "/" : "/") },
    components: {
      schemas: { Error: jsonSchema(ErrorBody, "output") },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (svc_sk_…) or a device token (svc_dev_…)" },
        apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key", description: "An API key, as an alias of the bearer form" },
      },
    },
  };
}
