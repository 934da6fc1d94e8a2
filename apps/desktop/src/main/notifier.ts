import { Notification } from "electron";
import type { Host } from "../host/host";
import type { ApprovalItem, GrantItem } from "../shared/desktop-api";
import { type AlertText, approvalAlert, grantRequestAlert } from "./alerts";

/**
 * A system notification for each new tool call and grant request; clicking one opens the
 * Approvals view. Returns a function that stops listening.
 */
export function notifyOnHostEvents(host: Host, openApprovals: () => void): () => void {
  if (!Notification.isSupported()) return () => {};
  // Electron drops a notification's click handler if the object is garbage-collected while shown.
  const shown = new Set<Notification>();
  const show = ({ title, body }: AlertText) => {
    const notification = new Notification({ title, body });
    shown.add(notification);
    notification.on("click", () => {
      shown.delete(notification);
      openApprovals();
    });
    notification.on("close", () => shown.delete(notification));
    notification.show();
  };
  const onApproval = (approval: ApprovalItem) => show(approvalAlert(approval));
  const onGrantRequest = (grant: GrantItem) => show(grantRequestAlert(grant));
  host.context.events.on("approval", onApproval);
  host.context.events.on("grant-request", onGrantRequest);
  return () => {
    host.context.events.off("approval", onApproval);
    host.context.events.off("grant-request", onGrantRequest);
  };
}
