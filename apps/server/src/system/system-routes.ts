import { API_BASE_PATH, buildOpenApiDocument } from "@tandem/core";
import { html } from "../http/reply";
import type { RouteHandlers } from "../http/router";
import { renderApiReference } from "./api-reference";

export function systemHandlers(): RouteHandlers<"openapi" | "apiReference"> {
  // The document depends only on the route table: build it once.
  const document = buildOpenApiDocument(API_BASE_PATH);
  const page = renderApiReference(document);
  return {
    openapi: () => document,
    apiReference: () => html(page),
  };
}
