import type { RouteDefinition, ValidatedInput } from "@tandem/core";
import type { z } from "zod";
import { ApiError } from "./errors";

/** `body.parentId: expected number` — where the problem is, then what it is. */
export function describeIssues(where: string, error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      const field = [where, ...issue.path.map(String)].join(".");
      return `${field}: ${issue.message}`;
    })
    .join("; ");
}

function parsePart(where: string, schema: z.ZodType | undefined, value: unknown, status: 400 | 422): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ApiError(status, "invalid_request", describeIssues(where, result.error));
}

/** Validates a request's parts against its route; throws a 400 (or the route's 422) naming the field. */
export function validateInput<R extends RouteDefinition>(
  route: R,
  raw: { params: unknown; query: unknown; body: unknown },
): ValidatedInput<R> {
  const bodyStatus = route.invalidStatus ?? 400;
  return {
    params: parsePart("params", route.params, raw.params, 400),
    query: parsePart("query", route.query, raw.query, 400),
    body: parsePart("body", route.body, raw.body, bodyStatus),
  } as ValidatedInput<R>;
}
