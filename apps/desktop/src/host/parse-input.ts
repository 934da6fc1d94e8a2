import type { z } from "zod";
import { HostRefusal } from "./host-refusal";

/**
 * Validates a host method's argument, which arrives as untrusted JSON (over IPC or HTTP). The
 * error names the method and each bad field, so the renderer can show it as is.
 */
export function parseInput<T>(method: string, schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "input"} ${issue.message}`).join("; ");
  throw new HostRefusal(`${method}: invalid input: ${issues}`, 400);
}
