import { z } from "zod";

/** ISO 8601 UTC with milliseconds, e.g. `2026-11-22T05:31:01.123Z`. */
export const Timestamp = z.string().describe("ISO 8601 UTC timestamp with milliseconds");

/** Every error the API returns has this flat shape; clients read `error` as a stable code. */
export const ErrorBody = z.object({
  success: z.literal(false),
  error: z.string().describe("stable snake_case code, e.g. insufficient_scope"),
  message: z.string().describe("human-readable explanation naming what is wrong"),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** A positive integer id as it arrives in a path or query string. */
export const IdParam = z.coerce
  .number({ error: "must be a number" })
  // In this order: the first failed check is the one reason given (http/validate.ts), and zod's
  // int() also refuses integers too large to be exact, for which "too large" is the reason.
  .positive({ error: "must be a positive id" })
  .max(Number.MAX_SAFE_INTEGER, { error: "is too large" })
  .int({ error: "must be a whole number" });

/** A positive integer id in a JSON body. */
export const Id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** `{ success: true, ...fields }` */
export function success<T extends z.ZodRawShape>(shape: T) {
  return z.object({ success: z.literal(true), ...shape });
}

export const EmptyBody = z.object({}).describe("an empty object (any fields are ignored)");
