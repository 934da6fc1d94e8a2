import type { ApprovalItem, EscalationItem, GrantItem, HeartbeatDelivery, InboxArrival } from "../shared/desktop-api";
import { personLabel } from "../shared/person-label";
import { plainText } from "./plain-text";

/** A system notification's text. */
export interface AlertText {
  readonly title: string;
  readonly body: string;
}

const BODY_LENGTH = 160;

/**
 * A new tool call waiting for the owner. The summary stays out: it is untrusted and can be long;
 * the owner reads it in the Approvals view, where it is shown in full as text.
 */
export function approvalAlert(approval: ApprovalItem): AlertText {
  const requester = personLabel(approval.requesterName, approval.requesterPrincipalId);
  return {
    title: "A tool call waits for your decision",
    body: plainText(`${approval.toolName}, while serving ${requester}. Click to allow or deny it.`, BODY_LENGTH),
  };
}

/** An agent's action paused for the owner (an escalation): who and which tool; the arguments stay in the Approvals view. */
export function escalationAlert(escalation: EscalationItem): AlertText {
  return {
    title: "An agent waits for your decision",
    body: plainText(`${escalation.sourceWords} wants to run ${escalation.toolName}. Click to continue or stop it.`, BODY_LENGTH),
  };
}

export function grantRequestAlert(grant: GrantItem): AlertText {
  const peer = personLabel(grant.peerName, grant.peerPrincipalId);
  return {
    title: "Someone asks to reach your agent",
    body: plainText(`${peer} asks to send requests to your coding agent. Click to accept or decline.`, BODY_LENGTH),
  };
}

/** A heartbeat message delivered to the owner's agent conversation: its start, as plain text. */
export function heartbeatAlert(delivery: HeartbeatDelivery): AlertText {
  return {
    title: "A message from your agent",
    body: plainText(delivery.preview || "Your heartbeat has something for you. Click to read it.", BODY_LENGTH),
  };
}

/** A message from someone in the inbox: who wrote it (and in which group), and its start, as plain text. */
export function inboxAlert(arrival: InboxArrival): AlertText {
  const where = arrival.groupName ? ` in ${arrival.groupName}` : "";
  return {
    title: plainText(`${arrival.from}${where}`, BODY_LENGTH),
    body: plainText(arrival.preview || "A new message. Click to read it.", BODY_LENGTH),
  };
}
