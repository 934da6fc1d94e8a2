import type { ContactRequestType, PairStatusName, RuntimeEndpoint, RuntimePairState } from "@tandem/core";
import type { Kysely } from "kysely";
import type { z } from "zod";
import type { Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { areConnected, hasAgentPermission } from "../../people/network/permissions";
import { type PairStatus, type PairStatusReason, pairStatus } from "./pair-status";
import { connectedPersonNotFound, parsePrincipalId } from "./resolve-person";

type StatusName = z.infer<typeof PairStatusName>;
type RuntimeState = z.infer<typeof RuntimePairState>;

/**
 * What `GET /local-agent/pair-status` answers: the bridges' `{status, message, targetReachable?}`
 * in their own words, and ours beside them (`runtimeStatus`, `paired`, `reason`).
 */
export interface PairStatusAnswer {
  status: StatusName;
  message: string;
  targetReachable?: boolean;
  /** Our word for the runtime: `paired`, `offline` (the default route's endpoint), `not_paired` (anything else, or not told). */
  runtimeStatus: RuntimeState;
  paired: boolean;
  reason?: PairStatusReason;
  /** Only in the answer about the caller's own runtime. */
  endpoint?: RuntimeEndpoint;
  sessionHandle?: string;
}

const REASON_TEXT: Record<PairStatusReason, string> = {
  no_default_route: "has no default route",
  endpoint_not_found: "has a default route to a runtime that is gone",
  endpoint_offline: "has a runtime that is offline",
  session_not_found: "has a default route to a session that is gone",
  session_closed: "has a default route to a closed session",
  inbound_disabled: "has a default route to a session that does not accept inbound work",
};

function runtimeState(status: PairStatus): RuntimeState {
  if (status.paired) return "paired";
  return status.reason === "endpoint_offline" ? "offline" : "not_paired";
}

/** Whether `from` has a request to `to` waiting (of `type`, or of any: to be contacts, for agent access). */
async function hasPendingRequest(db: Kysely<Schema>, from: number, to: number, type?: ContactRequestType): Promise<boolean> {
  let query = db
    .selectFrom("contact_requests")
    .select("id")
    .where("from_user_id", "=", from)
    .where("to_user_id", "=", to)
    .where("status", "=", "pending");
  if (type !== undefined) query = query.where("type", "=", type);
  return (await query.executeTakeFirst()) !== undefined;
}

/**
 * The caller's own pair status, or (with `principalIdText`) another person's, in the bridges'
 * words (docs/delegation/runtime.md has the map):
 * - the caller's own runtime: `ready` when paired, else `setup_bridge`;
 * - someone who gave the caller agent access: `ready`, with `targetReachable` saying whether a
 *   grant would reach their runtime now (bridges stop on `ready` + `targetReachable: false`);
 * - someone connected who did not: `awaiting_their_accept` while the caller's request waits,
 *   else `request_pair`;
 * - someone not connected with a request waiting between the two: `accept_incoming` (theirs to
 *   the caller) or `awaiting_their_accept` (the caller's); anyone else is 404 like resolve-person.
 * Someone else's endpoint and session stay private: only the status and the reason are told, and
 * only to people they gave agent access.
 */
export async function pairStatusAnswer(context: AppContext, caller: Principal, principalIdText?: string): Promise<PairStatusAnswer> {
  const { db } = context;
  const targetId = principalIdText === undefined ? caller.userId : parsePrincipalId(principalIdText);
  if (targetId === caller.userId) {
    const own = await pairStatus(context, caller.userId);
    return {
      ...own,
      status: own.paired ? "ready" : "setup_bridge",
      message: own.paired ? "Your runtime is paired and accepting work" : `Your account ${REASON_TEXT[own.reason]}`,
      ...(principalIdText === undefined ? {} : { targetReachable: own.paired }),
      runtimeStatus: runtimeState(own),
    };
  }
  const notReachable = { targetReachable: false, runtimeStatus: "not_paired", paired: false } as const;
  if (targetId === null) throw connectedPersonNotFound(principalIdText ?? "");
  if (!(await areConnected(db, caller.userId, targetId))) {
    if (await hasPendingRequest(db, targetId, caller.userId)) {
      return { status: "accept_incoming", message: "This person asked to connect with you; accept their request first", ...notReachable };
    }
    if (await hasPendingRequest(db, caller.userId, targetId)) {
      return { status: "awaiting_their_accept", message: "Your request is waiting for this person to accept it", ...notReachable };
    }
    throw connectedPersonNotFound(principalIdText ?? "");
  }
  if (!(await hasAgentPermission(db, targetId, caller.userId))) {
    // Only the caller's agent-access request counts: an agent request of theirs would give them access, not the caller.
    if (await hasPendingRequest(db, caller.userId, targetId, "agent")) {
      return {
        status: "awaiting_their_accept",
        message: "Your agent-access request is waiting for this person to accept it",
        ...notReachable,
      };
    }
    return {
      status: "request_pair",
      message: "This person has not given you agent access; ask them first (POST /network/request)",
      ...notReachable,
    };
  }
  const theirs = await pairStatus(context, targetId);
  return {
    status: "ready",
    message: theirs.paired ? "Their runtime is paired and accepting work" : `This person ${REASON_TEXT[theirs.reason]}`,
    targetReachable: theirs.paired,
    runtimeStatus: runtimeState(theirs),
    paired: theirs.paired,
    ...(theirs.paired ? {} : { reason: theirs.reason }),
  };
}
