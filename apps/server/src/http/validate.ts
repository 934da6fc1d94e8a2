import type { RouteDefinition, ValidatedInput } from "@tandem/core";
import type { z } from "zod";
import { ApiError } from "./errors";

/**
 * `body.parentId: expected number` — where the problem is, then what it is: one reason per field
 * (the first its schema found; "1.5e400" is not "a whole number" and also "too large", and
 * saying both reads as two problems), for at most three fields.
 */
export function describeIssues(where: string, error: z.ZodError): string {
  const byField = new Map<string, string>();
  for (const issue of error.issues) {
    const field = [where, ...issue.path.map(String)].join(".");
    if (!byField.has(field)) byField.set(field, issue.message);
  }
  return [...byField]
    .slice(0, 3)
    .map(([field, message]) => `${field}: ${message}`)
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
