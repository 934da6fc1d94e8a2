import type { AppInfo, AppMode, DesktopApi } from "../shared/desktop-api";

export interface HostConfig {
  /** How the renderer reaches this host; reported to the renderer as is. */
  readonly mode: AppMode;
  /** The desktop app's version: Electron's `app.getVersion()`, or the package's own version in web mode. */
  readonly version: string;
}

/**
 * The app's local back end. It is plain Node (never `electron`), so Electron's main process and
 * web mode run the very same code, and tests exercise it without Electron.
 */
export function createHost(config: HostConfig): DesktopApi {
  const appInfo: AppInfo = Object.freeze({ name: "Tandem", version: config.version, mode: config.mode });
  return {
    async getAppInfo() {
      return appInfo;
    },
  };
}
