import type { MenuItemConstructorOptions } from "electron";
import type { ApprovalItem } from "../shared/desktop-api";
import { personLabel } from "../shared/person-label";
import { plainText } from "./plain-text";

/** What the tray's items do; main wires them to the host and the window. */
export interface TrayActions {
  decide(approvalId: string, decision: "allow" | "deny"): void;
  openApprovals(): void;
  /** Opens the Agent section, where the unread messages are. */
  openAgent(): void;
  openWindow(): void;
  quit(): void;
}

/** A menu is no place for a long list: past this, one item leads to the Approvals view. */
export const TRAY_MENU_MAX_APPROVALS = 8;
const LABEL_LENGTH = 60;
const SUMMARY_LENGTH = 90;

/**
 * The tray's context menu for the pending tool calls: one submenu per call, naming the tool and
 * whom it serves, with its summary and Allow once / Deny; then the agent-access and grant requests
 * waiting (`requests`), answered in the Approvals view; then the agent's unread messages (`unread`:
 * heartbeat messages), read in the Agent view. Pure, so it is tested without Electron.
 */
export function buildTrayMenu(
  approvals: readonly ApprovalItem[],
  actions: TrayActions,
  requests = 0,
  unread = 0,
  escalations = 0,
): MenuItemConstructorOptions[] {
  const shown = approvals.slice(0, TRAY_MENU_MAX_APPROVALS);
  const hidden = approvals.length - shown.length;
  const items: MenuItemConstructorOptions[] = [{ label: pendingLabel(approvals.length), enabled: false }];
  for (const approval of shown) {
    items.push({
      label: plainText(`${approval.toolName} for ${personLabel(approval.requesterName, approval.requesterPrincipalId)}`, LABEL_LENGTH),
      submenu: [
        { label: plainText(approval.toolInputSummary || "(no details given)", SUMMARY_LENGTH), enabled: false },
        { type: "separator" },
        { label: "Allow once", click: () => actions.decide(approval.approvalId, "allow") },
        { label: "Deny", click: () => actions.decide(approval.approvalId, "deny") },
      ],
    });
  }
  if (approvals.length > 0) {
    items.push({ label: hidden > 0 ? `${hidden} more… Open Approvals` : "Open Approvals", click: () => actions.openApprovals() });
  }
  if (escalations > 0) {
    items.push({ label: `${escalationsLabel(escalations)}… Open Approvals`, click: () => actions.openApprovals() });
  }
  if (requests > 0) {
    items.push({ label: `${requestsLabel(requests)}… Open Approvals`, click: () => actions.openApprovals() });
  }
  if (unread > 0) {
    items.push({ label: `${unreadLabel(unread)}… Open Agent`, click: () => actions.openAgent() });
  }
  items.push(
    { type: "separator" },
    { label: "Open Tandem", click: () => actions.openWindow() },
    { label: "Quit Tandem", click: () => actions.quit() },
  );
  return items;
}

/** The tray's tooltip, which is also its badge on systems whose trays show no title. */
export function trayTooltip(pending: number, requests = 0, unread = 0, escalations = 0): string {
  const waiting = [
    pending > 0 ? pendingLabel(pending) : null,
    escalations > 0 ? escalationsLabel(escalations) : null,
    requests > 0 ? requestsLabel(requests) : null,
    unread > 0 ? unreadLabel(unread) : null,
  ].filter(Boolean);
  return waiting.length === 0 ? "Tandem" : `Tandem: ${waiting.join("; ")}`;
}

/** Agents' actions paused for the owner's Continue or Stop (escalations). */
export function escalationsLabel(escalations: number): string {
  return escalations === 1 ? "1 agent action waiting for your decision" : `${escalations} agent actions waiting for your decision`;
}

/** Agent-access and grant requests waiting for an answer. */
export function requestsLabel(requests: number): string {
  return requests === 1 ? "1 request waiting for your answer" : `${requests} requests waiting for your answer`;
}

/** The agent's messages not read yet (the heartbeat's arrive unread). */
export function unreadLabel(unread: number): string {
  return unread === 1 ? "1 unread message from your agent" : `${unread} unread messages from your agent`;
}

export function pendingLabel(pending: number): string {
  if (pending === 0) return "No tool calls waiting";
  return pending === 1 ? "1 tool call waiting for you" : `${pending} tool calls waiting for you`;
}
