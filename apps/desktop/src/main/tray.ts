import { readFileSync } from "node:fs";
import { app, Menu, type NativeImage, nativeImage, Tray } from "electron";
import trayIcon2x from "../../resources/tray-icon@2x.png?asset";
import trayIcon from "../../resources/tray-icon.png?asset";
import trayIconAttention2x from "../../resources/tray-icon-attention@2x.png?asset";
import trayIconAttention from "../../resources/tray-icon-attention.png?asset";
import type { Host } from "../host/host";
import type { ApprovalItem } from "../shared/desktop-api";
import { coalesce } from "./coalesce";
import { buildTrayMenu, type TrayActions, trayTooltip } from "./tray-menu";

/** Decisions made elsewhere (another device, the web page) reach the tray at least this often. */
const REFRESH_MS = 15_000;

export interface AppTray {
  /** Re-reads the pending tool calls now. */
  refresh(): Promise<void>;
  destroy(): void;
}

/**
 * The tray: the way back into the app once its window is closed, and the owner's quickest answer
 * to a tool call. Its badge is the number of pending calls and requests and of the agent's unread
 * messages: the tray title on macOS,
 * the dock or launcher badge where there is one, the icon's red dot and the tooltip everywhere.
 */
export function createAppTray(host: Host, actions: Omit<TrayActions, "decide">, onError: (error: unknown) => void): AppTray {
  const images = { idle: loadIcon(trayIcon, trayIcon2x), attention: loadIcon(trayIconAttention, trayIconAttention2x) };
  const tray = new Tray(images.idle);
  let approvals: readonly ApprovalItem[] = [];
  let lastCount = -1;
  /** Agent-access and grant requests waiting, and the agent's unread messages: they count on the badge too. */
  let requests = 0;
  let unread = 0;
  /** Agents' actions paused for the owner (escalations): they count too. */
  let escalations = 0;

  const render = () => {
    const count = approvals.length + requests + unread + escalations;
    const decide = (approvalId: string, decision: "allow" | "deny") => {
      host.api
        .resolveApproval({ approvalId, decision, scope: "once" })
        .catch(onError)
        .finally(() => void refresh());
    };
    tray.setContextMenu(Menu.buildFromTemplate(buildTrayMenu(approvals, { ...actions, decide }, requests, unread, escalations)));
    tray.setToolTip(trayTooltip(approvals.length, requests, unread, escalations));
    tray.setImage(count > 0 ? images.attention : images.idle);
    if (process.platform === "darwin") tray.setTitle(count > 0 ? String(count) : "");
    app.setBadgeCount(count);
  };

  const refresh = coalesce(async () => {
    try {
      approvals = await host.api.listApprovals();
      ({ requestsPending: requests, agentUnread: unread, escalationsPending: escalations } = await host.status());
    } catch {
      // Signed out or offline: nothing the owner could decide from here right now.
      approvals = [];
      requests = 0;
      unread = 0;
      escalations = 0;
    }
    lastCount = approvals.length;
    render();
  }, onError);

  // `status` fires for sync progress too; only a changed count means the list changed.
  const onStatus = () => {
    void host
      .status()
      .then((status) => {
        const moved =
          status.approvalsPending !== lastCount ||
          status.requestsPending !== requests ||
          status.agentUnread !== unread ||
          status.escalationsPending !== escalations;
        if (moved) void refresh();
      })
      .catch(onError);
  };
  const onApproval = () => void refresh();
  host.context.events.on("status", onStatus);
  host.context.events.on("approval", onApproval);
  host.context.events.on("escalation", onApproval);
  const timer = setInterval(() => void refresh(), REFRESH_MS);
  // On Windows and Linux a click opens the window; macOS shows the menu on click by itself.
  tray.on("click", () => actions.openWindow());
  render();
  void refresh();

  return {
    refresh,
    destroy() {
      clearInterval(timer);
      host.context.events.off("status", onStatus);
      host.context.events.off("approval", onApproval);
      host.context.events.off("escalation", onApproval);
      tray.destroy();
    },
  };
}

/** One image with both resolutions, so HiDPI trays stay sharp (the build renames the files, so `@2x` lookup cannot work). */
function loadIcon(file1x: string, file2x: string): NativeImage {
  const image = nativeImage.createEmpty();
  image.addRepresentation({ scaleFactor: 1, buffer: readFileSync(file1x) });
  image.addRepresentation({ scaleFactor: 2, buffer: readFileSync(file2x) });
  return image;
}
