import path from "node:path";
import { app, BrowserWindow, ipcMain } from "electron";
import { type Host, startHost } from "../host/host";
import { FileSecretStore } from "../host/session/file-secret-store";
import { DESKTOP_API_METHODS } from "../shared/desktop-api";
import { invokeDesktopApi, ipcChannelFor } from "../shared/desktop-api-transport";

// Electron glue only: everything the app does lives in the host, which web mode runs too.
function exposeHostOverIpc(host: Host): void {
  for (const method of DESKTOP_API_METHODS) {
    ipcMain.handle(ipcChannelFor(method), (_event, ...args: unknown[]) => invokeDesktopApi(host.api, method, args));
  }
}

function openMainWindow(): void {
  const window = new BrowserWindow({
    title: "Tandem",
    width: 1100,
    height: 720,
    show: false,
    webPreferences: {
      // The build names the preload .cjs because sandboxed preloads cannot be ES modules.
      preload: path.join(import.meta.dirname, "../preload/index.cjs"),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  });
  // Showing once painted avoids a blank white flash.
  window.once("ready-to-show", () => window.show());
  // The app opens no windows of its own; any other page must not get a window holding the API.
  window.webContents.setWindowOpenHandler(() => ({ action: "deny" }));

  // `electron-vite dev` serves the renderer with hot reload and says where.
  const devServerUrl = process.env.ELECTRON_RENDERER_URL;
  if (devServerUrl) {
    void window.loadURL(devServerUrl);
  } else {
    void window.loadFile(path.join(import.meta.dirname, "../renderer/index.html"));
  }
}

// Not a top-level await: Electron emits `ready` only after the ES module entry has finished evaluating,
// so awaiting it here would wait forever.
void app.whenReady().then(async () => {
  const dataDir = app.getPath("userData");
  const host = await startHost({ mode: "electron", version: app.getVersion(), dataDir, secrets: new FileSecretStore(dataDir) });
  exposeHostOverIpc(host);
  openMainWindow();
  // macOS keeps apps running without windows and reopens one from the dock.
  app.on("activate", () => {
    if (BrowserWindow.getAllWindows().length === 0) openMainWindow();
  });
});

// Until the tray exists, a closed window would leave the app running with no way back in.
app.on("window-all-closed", () => {
  if (process.platform !== "darwin") app.quit();
});
