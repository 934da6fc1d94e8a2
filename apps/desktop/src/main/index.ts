import { app, dialog, ipcMain, safeStorage, shell } from "electron";
import { type Host, startHost } from "../host/host";
import { DESKTOP_API_METHODS } from "../shared/desktop-api";
import { invokeDesktopApi, ipcChannelFor } from "../shared/desktop-api-transport";
import { createMainWindow } from "./main-window";
import { notifyOnHostEvents } from "./notifier";
import { createQuitGuard } from "./quit-guard";
import { openMainSecretStore } from "./safe-storage-secret-store";
import { createAppTray } from "./tray";

// Electron glue only: everything the app does lives in the host, which web mode runs too.

/** electron-builder.yml's appId; Windows shows notifications only for an app with this id. */
const APP_ID = "dev.tandem.desktop";

function exposeHostOverIpc(host: Host): void {
  for (const method of DESKTOP_API_METHODS) {
    ipcMain.handle(ipcChannelFor(method), (_event, ...args: unknown[]) => invokeDesktopApi(host.api, method, args));
  }
}

function logError(error: unknown): void {
  console.error("[tandem]", error instanceof Error ? error.message : error);
}

async function start(): Promise<void> {
  if (process.platform === "win32") app.setAppUserModelId(APP_ID);
  const dataDir = app.getPath("userData");
  // safeStorage answers reliably only after `ready` (Linux picks its keyring then).
  const secrets = openMainSecretStore(safeStorage, dataDir, process.platform, (message) => console.warn("[tandem]", message));
  const host = await startHost({
    mode: "electron",
    version: app.getVersion(),
    dataDir,
    secrets: secrets.store,
    openExternal: (url) => shell.openExternal(url),
  });
  exposeHostOverIpc(host);

  const guard = createQuitGuard({
    unsyncedDocuments: () => host.unsyncedDocuments(),
    unsavedWork: () => host.unsavedWork(),
    confirmQuit: (message, unsynced) =>
      dialog.showMessageBoxSync({
        type: "warning",
        buttons: ["Quit anyway", "Cancel"],
        defaultId: 1,
        cancelId: 1,
        message,
        detail:
          unsynced > 0
            ? "The documents' changes are saved on this computer and are sent the next time Tandem runs and reaches the server."
            : "Unsaved edits are lost when Tandem quits.",
      }) === 0,
    closeHost: () => host.close(),
    quit: () => app.quit(),
    onCloseError: logError,
  });
  app.on("before-quit", (event) => guard.onBeforeQuit(event));

  const window = createMainWindow(() => guard.quitting);
  const openApprovals = () => window.show("approvals");
  const openAgent = () => window.show("agent");
  createAppTray(host, { openWindow: () => window.show(), openApprovals, openAgent, quit: () => app.quit() }, logError);
  notifyOnHostEvents(host, { openApprovals, openAgent, openInbox: () => window.show("inbox") });
  window.show();

  // Launching the app again, or clicking its dock icon on macOS, brings the window back.
  app.on("second-instance", () => window.show());
  app.on("activate", () => window.show());
}

// One instance per user: two would share the local database and pair twice.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // The window hides to the tray instead of closing; without this listener Electron would quit
  // when the last window closes.
  app.on("window-all-closed", () => {});
  // Not a top-level await: Electron emits `ready` only after the ES module entry has finished
  // evaluating, so awaiting it here would wait forever.
  void app
    .whenReady()
    .then(start)
    .catch((error: unknown) => {
      dialog.showErrorBox("Tandem could not start", error instanceof Error ? error.message : String(error));
      app.exit(1);
    });
}
