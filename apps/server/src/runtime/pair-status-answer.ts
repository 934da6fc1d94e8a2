import type { PairStatusName, RuntimeEndpoint } from "@tandem/core";
import type { z } from "zod";
import type { Principal } from "../auth/principal";
import type { AppContext } from "../context";
import { areConnected, hasAgentPermission } from "../network/permissions";
import { type PairStatus, type PairStatusReason, pairStatus } from "./pair-status";
import { connectedPersonNotFound, parsePrincipalId } from "./resolve-person";

type StatusName = z.infer<typeof PairStatusName>;

/** What `GET /local-agent/pair-status` answers: the bridges' `{status, message, targetReachable?}` beside the seed's fields. */
export interface PairStatusAnswer {
  status: StatusName;
  message: string;
  targetReachable?: boolean;
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

function statusName(status: PairStatus): StatusName {
  if (status.paired) return "paired";
  return status.reason === "endpoint_offline" ? "offline" : "not_paired";
}

/**
 * The caller's own pair status, or (with `principalIdText`) a connected person's: whether a grant
 * to them would reach a runtime now. Someone else's endpoint and session stay private: only the
 * status and the reason are told, and only to people they gave agent access (to anyone else
 * connected the answer is `not_paired`); an unknown or unconnected id is 404 like resolve-person.
 */
export async function pairStatusAnswer(context: AppContext, caller: Principal, principalIdText?: string): Promise<PairStatusAnswer> {
  const targetId = principalIdText === undefined ? caller.userId : parsePrincipalId(principalIdText);
  if (targetId === caller.userId) {
    const own = await pairStatus(context, caller.userId);
    const message = own.paired ? "Your runtime is paired and accepting work" : `Your account ${REASON_TEXT[own.reason]}`;
    return { ...own, status: statusName(own), message, ...(principalIdText === undefined ? {} : { targetReachable: own.paired }) };
  }
  if (targetId === null || !(await areConnected(context.db, caller.userId, targetId))) {
    throw connectedPersonNotFound(principalIdText ?? "");
  }
  if (!(await hasAgentPermission(context.db, targetId, caller.userId))) {
    return {
      status: "not_paired",
      message: "This person has not given you agent access; ask them first (POST /network/request)",
      targetReachable: false,
      paired: false,
    };
  }
  const theirs = await pairStatus(context, targetId);
  const message = theirs.paired ? "Their runtime is paired and accepting work" : `This person ${REASON_TEXT[theirs.reason]}`;
  return {
    status: statusName(theirs),
    message,
    targetReachable: theirs.paired,
    paired: theirs.paired,
    ...(theirs.paired ? {} : { reason: theirs.reason }),
  };
}
