import type { MenuItemConstructorOptions } from "electron";
import { describe, expect, it } from "vitest";
import type { ApprovalItem } from "../shared/desktop-api";
import { buildTrayMenu, pendingLabel, TRAY_MENU_MAX_APPROVALS, type TrayActions, trayTooltip } from "./tray-menu";

function approval(overrides: Partial<ApprovalItem> = {}): ApprovalItem {
  return {
    approvalId: "apr_1",
    toolName: "Bash",
    toolInputSummary: "ls -la",
    requesterPrincipalId: "7",
    requesterName: "Alice",
    communicationSessionId: "cs_1",
    createdAt: "2026-01-01T10:00:00.000Z",
    expiresAt: "2026-01-01T10:05:00.000Z",
    ...overrides,
  };
}

function recordingActions() {
  const calls: string[] = [];
  const actions: TrayActions = {
    decide: (approvalId, decision) => calls.push(`${decision} ${approvalId}`),
    openApprovals: () => calls.push("approvals"),
    openAgent: () => calls.push("agent"),
    openWindow: () => calls.push("window"),
    quit: () => calls.push("quit"),
  };
  return { calls, actions };
}

/** Clicks a menu item the way Electron would (its click handler takes event arguments we do not use). */
function click(item: MenuItemConstructorOptions | undefined): void {
  if (!item?.click) throw new Error(`item ${item?.label} has no click handler`);
  (item.click as () => void)();
}

function submenuOf(item: MenuItemConstructorOptions | undefined): MenuItemConstructorOptions[] {
  if (!Array.isArray(item?.submenu)) throw new Error(`item ${item?.label} has no submenu`);
  return item.submenu;
}

function labels(items: readonly MenuItemConstructorOptions[]): (string | undefined)[] {
  return items.map((item) => (item.type === "separator" ? "---" : item.label));
}

describe("the tray menu", () => {
  it("with nothing pending: a disabled header, Open Tandem and Quit", () => {
    const { calls, actions } = recordingActions();
    const menu = buildTrayMenu([], actions);
    expect(labels(menu)).toEqual(["No tool calls waiting", "---", "Open Tandem", "Quit Tandem"]);
    expect(menu[0]?.enabled).toBe(false);
    click(menu[2]);
    click(menu[3]);
    expect(calls).toEqual(["window", "quit"]);
  });

  it("lists each pending call with its summary, Allow once and Deny", () => {
    const { calls, actions } = recordingActions();
    const menu = buildTrayMenu([approval(), approval({ approvalId: "apr_2", toolName: "Write", requesterName: null })], actions);
    expect(labels(menu)).toEqual([
      "2 tool calls waiting for you",
      "Bash for Alice",
      "Write for user 7",
      "Open Approvals",
      "---",
      "Open Tandem",
      "Quit Tandem",
    ]);
    const submenu = submenuOf(menu[1]);
    expect(labels(submenu)).toEqual(["ls -la", "---", "Allow once", "Deny"]);
    expect(submenu[0]?.enabled).toBe(false);
    click(submenu[2]);
    click(submenuOf(menu[2])[3]);
    click(menu[3]);
    expect(calls).toEqual(["allow apr_1", "deny apr_2", "approvals"]);
  });

  it("keeps untrusted text to one bounded line without mnemonics or markup", () => {
    const { actions } = recordingActions();
    const long = "x".repeat(500);
    const menu = buildTrayMenu(
      [approval({ toolName: "Bash&Co <b>", requesterName: "Eve\nthe\u0007peer", toolInputSummary: `rm -rf /\n\t${long}` })],
      actions,
    );
    const label = menu[1]?.label ?? "";
    expect(label).toBe("Bash＆Co ‹b› for Eve the peer");
    const summary = submenuOf(menu[1])[0]?.label ?? "";
    expect(summary.startsWith("rm -rf / xxx")).toBe(true);
    expect(Array.from(summary)).toHaveLength(90);
    expect(summary.endsWith("…")).toBe(true);
    expect(summary).not.toMatch(/[\n\t&<>]/);
  });

  it("shows at most a handful of calls and leads to the Approvals view for the rest", () => {
    const { calls, actions } = recordingActions();
    const many = Array.from({ length: TRAY_MENU_MAX_APPROVALS + 3 }, (_, index) => approval({ approvalId: `apr_${index}` }));
    const menu = buildTrayMenu(many, actions);
    expect(menu.filter((item) => item.submenu)).toHaveLength(TRAY_MENU_MAX_APPROVALS);
    const more = menu.find((item) => item.label === "3 more… Open Approvals");
    click(more);
    expect(calls).toEqual(["approvals"]);
  });

  it("counts the agent-access and grant requests waiting, leading to the Approvals view", () => {
    const { calls, actions } = recordingActions();
    const menu = buildTrayMenu([approval()], actions, 2);
    click(menu.find((item) => item.label === "2 requests waiting for your answer… Open Approvals"));
    expect(calls).toEqual(["approvals"]);
    expect(trayTooltip(1, 2)).toBe("Tandem: 1 tool call waiting for you; 2 requests waiting for your answer");
    expect(trayTooltip(0, 1)).toBe("Tandem: 1 request waiting for your answer");
  });

  it("counts the agents' actions waiting for a decision (escalations), leading to the Approvals view", () => {
    const { calls, actions } = recordingActions();
    const menu = buildTrayMenu([], actions, 0, 0, 2);
    click(menu.find((item) => item.label === "2 agent actions waiting for your decision… Open Approvals"));
    expect(calls).toEqual(["approvals"]);
    expect(trayTooltip(1, 0, 0, 1)).toBe("Tandem: 1 tool call waiting for you; 1 agent action waiting for your decision");
  });

  it("counts the agent's unread messages, leading to the Agent view", () => {
    const { calls, actions } = recordingActions();
    const menu = buildTrayMenu([], actions, 0, 3);
    expect(labels(menu)).toEqual([
      "No tool calls waiting",
      "3 unread messages from your agent… Open Agent",
      "---",
      "Open Tandem",
      "Quit Tandem",
    ]);
    click(menu[1]);
    expect(calls).toEqual(["agent"]);
    expect(trayTooltip(0, 0, 1)).toBe("Tandem: 1 unread message from your agent");
    expect(trayTooltip(1, 1, 2)).toBe(
      "Tandem: 1 tool call waiting for you; 1 request waiting for your answer; 2 unread messages from your agent",
    );
  });

  it("says the count in the tooltip", () => {
    expect(trayTooltip(0)).toBe("Tandem");
    expect(trayTooltip(1)).toBe("Tandem: 1 tool call waiting for you");
    expect(trayTooltip(3)).toBe("Tandem: 3 tool calls waiting for you");
    expect(pendingLabel(0)).toBe("No tool calls waiting");
  });
});
