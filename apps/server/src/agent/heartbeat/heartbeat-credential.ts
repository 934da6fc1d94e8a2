import { isScope, type Scope } from "@tandem/core";
import type { Kysely } from "kysely";
import type { ApiKeyCredential, OAuthCredential } from "../../auth/principal";
import type { Schema } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { HEARTBEAT_ACTION_SCOPES } from "../tools/run-grant";

/**
 * The `os.heartbeat:*` scopes run the heartbeat; they are not access to notes, todos or memory.
 * So a policy remembers the credential that set it (recorded by the server from the request,
 * never taken from the body), a scheduled run gets no scope that credential lacks, and it stops
 * once the credential is revoked: a key that may only run the heartbeat cannot turn the schedule
 * into a way of writing todos or reading notes.
 */

/** The credential that set a policy, as stored with it. */
export interface PolicySetter {
  readonly kind: "api_key" | "oauth";
  /** The API key's id, or the OAuth grant's id. */
  readonly id: string;
  readonly scopes: ReadonlySet<Scope>;
}

export function setterOf(credential: ApiKeyCredential | OAuthCredential): PolicySetter {
  return { kind: credential.kind, id: credential.id, scopes: credential.scopes };
}

/** 403 `insufficient_scope` naming what of `needed` the credential lacks, for `what` and `why`. */
function requireScopes(scopes: ReadonlySet<Scope>, needed: readonly Scope[], what: string, why: string): void {
  const missing = needed.filter((scope) => !scopes.has(scope));
  if (missing.length === 0) return;
  throw new ApiError(403, "insufficient_scope", `${what} needs the scope${missing.length > 1 ? "s" : ""} ${missing.join(", ")} (${why})`);
}

/**
 * The ACTIONS tier writes notes, todos and memory, so only a credential that may write all three
 * may choose it: else 403 `insufficient_scope` naming what is missing.
 */
export function requireActionScopes(scopes: ReadonlySet<Scope>): void {
  requireScopes(scopes, HEARTBEAT_ACTION_SCOPES, "The ACTIONS tier", "a heartbeat that writes may write only what this credential may");
}

/** The scopes that write memory (as `memory_write` needs them). */
const MEMORY_WRITE_SCOPES: readonly Scope[] = ["os.notes:write", "os.memory:write"];

/**
 * The checklist is a note of the owner's memory (`Memory/Self/HEARTBEAT.md`) and the owner's
 * request to every run, scheduled ones included: writing it is writing memory, and instructing
 * runs that may hold more scopes than the writer. So it needs the scopes that write memory.
 */
export function requireChecklistScopes(scopes: ReadonlySet<Scope>): void {
  requireScopes(scopes, MEMORY_WRITE_SCOPES, "Changing the checklist", "it is the memory note Memory/Self/HEARTBEAT.md");
}

const parseScopes = (json: string | null): Scope[] => {
  try {
    const parsed: unknown = JSON.parse(json ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((s): s is Scope => typeof s === "string" && isScope(s)) : [];
  } catch {
    return [];
  }
};

/** What a scheduled run may use: the setter's scopes, or why the schedule must stop. */
export type ScheduledLimit = { readonly scopes: ReadonlySet<Scope> } | { readonly stop: string; readonly setById: string | null };

/**
 * The scopes a scheduled run of `ownerId` is capped to: those the policy's setter held when it set
 * it, and, for an API key, still holds now. A revoked key or connected app (or a policy stored
 * before setters were recorded) stops the schedule, with the reason.
 */
export async function scheduledRunLimit(db: Kysely<Schema>, ownerId: number, nowMs: number): Promise<ScheduledLimit> {
  const policy = await db
    .selectFrom("heartbeat_policies")
    .select(["set_by_kind", "set_by_id", "set_by_scopes"])
    .where("user_id", "=", ownerId)
    .executeTakeFirst();
  const recorded = parseScopes(policy?.set_by_scopes ?? null);
  const id = policy?.set_by_id ?? null;
  if (policy?.set_by_kind === "api_key" && id !== null) {
    const key = await db
      .selectFrom("api_keys")
      .select(["scopes", "revoked_at"])
      .where("id", "=", id)
      .where("user_id", "=", ownerId)
      .executeTakeFirst();
    if (!key || key.revoked_at !== null) {
      return {
        stop: `The schedule stopped: the API key ${id} that set it was revoked. Switch the schedule on again with a current key.`,
        setById: id,
      };
    }
    const current = new Set(parseScopes(key.scopes));
    return { scopes: new Set(recorded.filter((scope) => current.has(scope))) };
  }
  if (policy?.set_by_kind === "oauth" && id !== null) {
    const grant = await db
      .selectFrom("oauth_models")
      .select(["account_id", "expires_at"])
      .where("model", "=", "Grant")
      .where("id", "=", id)
      .executeTakeFirst();
    if (!grant || grant.account_id !== String(ownerId) || (grant.expires_at !== null && Number(grant.expires_at) <= nowMs)) {
      return { stop: "The schedule stopped: the connected app that set it was disconnected. Switch the schedule on again.", setById: id };
    }
    return { scopes: new Set(recorded) };
  }
  return {
    stop: "The schedule stopped: it was set before Tandem recorded which credential set a schedule. Switch it on again to resume.",
    setById: id,
  };
}
