import path from "node:path";
import { pathToFileURL } from "node:url";
import { BrowserWindow, dialog } from "electron";

/** Sections main can open the window on; the renderer selects the section named by the URL's hash. */
export type WindowSection = "approvals" | "agent" | "inbox";

export interface MainWindow {
  /** Shows the window (creating it if needed) and brings it forward, on `section` if given. */
  show(section?: WindowSection): void;
}

/**
 * The app's one window. Closing it only hides it: the app lives in the tray, where replication and
 * the bridge go on. It really closes only once `quitting()` says the app is quitting.
 */
export function createMainWindow(quitting: () => boolean): MainWindow {
  let window: BrowserWindow | null = null;
  // `electron-vite dev` serves the renderer with hot reload and says where.
  const devServerUrl = process.env.ELECTRON_RENDERER_URL;
  const indexFile = path.join(import.meta.dirname, "../renderer/index.html");
  const appUrl = devServerUrl ?? pathToFileURL(indexFile).href;

  const open = (section: WindowSection | undefined): BrowserWindow => {
    const created = new BrowserWindow({
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
    created.once("ready-to-show", () => created.show());
    // The app opens no windows of its own; any other page must not get a window holding the API.
    created.webContents.setWindowOpenHandler(() => ({ action: "deny" }));
    // Nor may the window itself leave the app (a link in untrusted text, a dropped file).
    created.webContents.on("will-navigate", (event, url) => {
      if (!url.startsWith(appUrl)) event.preventDefault();
    });
    // The page asks before it unloads with unsaved edits (a reload); Electron would cancel silently, so ask here.
    // Quitting asked already (the quit guard), and the host is closed by then: the page goes.
    created.webContents.on("will-prevent-unload", (event) => {
      const leave =
        quitting() ||
        dialog.showMessageBoxSync(created, {
          type: "warning",
          buttons: ["Leave anyway", "Stay"],
          defaultId: 1,
          cancelId: 1,
          message: "Leave this page with unsaved edits?",
          detail: "Your heartbeat settings or checklist have changes that are not saved. Leaving loses them.",
        }) === 0;
      if (leave) event.preventDefault();
    });
    created.on("close", (event) => {
      if (quitting()) return;
      event.preventDefault();
      created.hide();
    });
    created.on("closed", () => {
      window = null;
    });

    if (devServerUrl) {
      void created.loadURL(section ? `${devServerUrl}#${section}` : devServerUrl);
    } else {
      void created.loadFile(indexFile, section ? { hash: section } : {});
    }
    return created;
  };

  return {
    show(section) {
      if (!window) {
        window = open(section);
        return;
      }
      // The hash is a constant of ours, never outside text.
      if (section) void window.webContents.executeJavaScript(`location.hash = ${JSON.stringify(section)};`);
      if (window.isMinimized()) window.restore();
      window.show();
      window.focus();
    },
  };
}
