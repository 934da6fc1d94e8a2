import { Notification } from "electron";
import type { Host } from "../host/host";
import type { ApprovalItem, EscalationItem, GrantItem, HeartbeatDelivery, InboxArrival } from "../shared/desktop-api";
import { type AlertText, approvalAlert, escalationAlert, grantRequestAlert, heartbeatAlert, inboxAlert } from "./alerts";

/** Where a click on a notification leads. */
export interface NotificationTargets {
  openApprovals(): void;
  openAgent(): void;
  openInbox(): void;
}

/**
 * A system notification for each new tool call, agent action waiting (escalation) and grant request, which opens the Approvals view
 * when clicked, for each heartbeat message delivered, which opens the Agent view, and for each
 * message from someone (the inbox's live arrivals), which opens the Inbox. Returns a
 * function that stops listening.
 */
export function notifyOnHostEvents(host: Host, targets: NotificationTargets): () => void {
  if (!Notification.isSupported()) return () => {};
  // Electron drops a notification's click handler if the object is garbage-collected while shown.
  const shown = new Set<Notification>();
  const show = ({ title, body }: AlertText, open: () => void) => {
    const notification = new Notification({ title, body });
    shown.add(notification);
    notification.on("click", () => {
      shown.delete(notification);
      open();
    });
    notification.on("close", () => shown.delete(notification));
    notification.show();
  };
  const onApproval = (approval: ApprovalItem) => show(approvalAlert(approval), targets.openApprovals);
  const onGrantRequest = (grant: GrantItem) => show(grantRequestAlert(grant), targets.openApprovals);
  const onHeartbeat = (delivery: HeartbeatDelivery) => show(heartbeatAlert(delivery), targets.openAgent);
  host.context.events.on("approval", onApproval);
  const onEscalation = (escalation: EscalationItem) => show(escalationAlert(escalation), targets.openApprovals);
  host.context.events.on("escalation", onEscalation);
  host.context.events.on("grant-request", onGrantRequest);
  host.context.events.on("heartbeat-message", onHeartbeat);
  const onInbox = (arrival: InboxArrival) => show(inboxAlert(arrival), targets.openInbox);
  host.context.events.on("inbox-message", onInbox);
  return () => {
    host.context.events.off("approval", onApproval);
    host.context.events.off("escalation", onEscalation);
    host.context.events.off("grant-request", onGrantRequest);
    host.context.events.off("heartbeat-message", onHeartbeat);
    host.context.events.off("inbox-message", onInbox);
  };
}
