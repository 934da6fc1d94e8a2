import { z } from "zod";
import { defineRoute } from "./route";

/** Routes about the API itself; they need no credential. */
export const systemRoutes = {
  openapi: defineRoute({
    method: "GET",
    path: "/openapi.json",
    category: "system",
    summary: "This API as an OpenAPI 3.1 document",
    auth: "public",
    response: z.record(z.string(), z.unknown()),
  }),
  apiReference: defineRoute({
    method: "GET",
    path: "/reference",
    category: "system",
    summary: "This API as a readable HTML page",
    auth: "public",
    response: z.string().describe("text/html"),
  }),
} as const;
