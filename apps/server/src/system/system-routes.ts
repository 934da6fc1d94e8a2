import { API_BASE_PATH, buildOpenApiDocument } from "@tandem/core";
import { html } from "../http/reply";
import type { RouteHandlers } from "../http/router";
import { renderApiReference } from "./api-reference";

export function systemHandlers(): RouteHandlers<"openapi" | "apiReference"> {
  // The document depends only on the route table: built once, at its first request rather than at
  // start (turning every route's zod schemas into JSON Schema is a large part of a start's CPU).
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  let page: string | undefined;
  const openApiDocument = () => {
    document ??= buildOpenApiDocument(API_BASE_PATH);
    return document;
  };
  return {
    openapi: () => openApiDocument(),
    apiReference: () => {
      page ??= renderApiReference(openApiDocument());
      return html(page);
    },
  };
}
