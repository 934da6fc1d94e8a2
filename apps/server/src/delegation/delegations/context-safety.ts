/**
 * Whether a delegation's `context` is safe to pass to another person's agent. A message conveys
 * intent and context, never authority: a context that carries a credential would hand the peer
 * (and its model) authority the sender never meant to give, so it is refused, fail-closed.
 */
import { CREDENTIAL_KEY, normalizeCredentialKey as normalizeKey, secretKind } from "@tandem/core";

/** The largest context accepted, as serialized JSON in UTF-8 bytes. */
export const MAX_CONTEXT_BYTES = 16 * 1024;

export type ContextCheck = { safe: true } | { safe: false; reason: string };

/**
 * Checks a delegation's `task`, free text the peer's agent reads as it does the context: refused
 * when it carries something that looks like a secret. The reason never echoes it.
 */
export function checkTask(task: string): ContextCheck {
  const kind = secretKind(task);
  return kind ? { safe: false, reason: `task looks like it contains ${kind}; never pass credentials in a delegation` } : { safe: true };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** `context.a.b[2]` */
const childPath = (path: string, key: string | number) =>
  typeof key === "number" ? `${path}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/**
 * Checks a context: a plain JSON object, at most {@link MAX_CONTEXT_BYTES} serialized, with no
 * credential-named key holding a non-empty string and no string (key or value, at any depth)
 * that looks like a secret. The reason names where the problem is, never the secret itself.
 */
export function checkContext(context: unknown): ContextCheck {
  if (!isPlainObject(context)) {
    const kind = context === null ? "null" : Array.isArray(context) ? "an array" : `a ${typeof context}`;
    return { safe: false, reason: `context must be a JSON object, not ${kind}` };
  }
  const bytes = Buffer.byteLength(JSON.stringify(context), "utf8");
  if (bytes > MAX_CONTEXT_BYTES) {
    return { safe: false, reason: `context is ${bytes} bytes of JSON; the limit is ${MAX_CONTEXT_BYTES} (16 KiB)` };
  }
  // Iterative walk: a small document can still nest thousands of levels deep.
  const pending: [unknown, string][] = [[context, "context"]];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [value, path] = item;
    if (typeof value === "string") {
      const kind = secretKind(value);
      if (kind) return { safe: false, reason: `${path} looks like ${kind}; never pass credentials in a delegation` };
    } else if (Array.isArray(value)) {
      value.forEach((entry, index) => {
        pending.push([entry, childPath(path, index)]);
      });
    } else if (typeof value === "object" && value !== null) {
      for (const [key, entry] of Object.entries(value)) {
        const at = childPath(path, key);
        const keyKind = secretKind(key);
        if (keyKind) return { safe: false, reason: `a key in ${path} looks like ${keyKind}; never pass credentials in a delegation` };
        if (typeof entry === "string" && entry.trim() !== "" && CREDENTIAL_KEY.test(normalizeKey(key))) {
          return { safe: false, reason: `${at} holds a credential ("${key}"); never pass credentials in a delegation` };
        }
        pending.push([entry, at]);
      }
    }
  }
  return { safe: true };
}
