import { contextBridge, ipcRenderer } from "electron";
import { DESKTOP_API_GLOBAL } from "../shared/desktop-api";
import { createDesktopApiClient, ipcChannelFor } from "../shared/desktop-api-transport";

// The renderer gets this one typed API and nothing else of Electron or Node.
contextBridge.exposeInMainWorld(
  DESKTOP_API_GLOBAL,
  createDesktopApiClient((method, args) => ipcRenderer.invoke(ipcChannelFor(method), ...args)),
);
