import { randomBytes } from "node:crypto";

/**
 * Opaque ids for runtime objects (`ep_…`, `cs_…`, `msg_…`): a type prefix and 128 random bits in
 * base64url. Unguessable, so knowing an id never helps reach someone else's object.
 */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString("base64url")}`;
}
