import type { DesktopApi } from "../shared/desktop-api";

declare global {
  interface Window {
    /** Installed by the preload (as `DESKTOP_API_GLOBAL`) under Electron; absent in a browser. */
    readonly tandem?: DesktopApi;
  }
}
