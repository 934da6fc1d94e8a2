/**
 * The one API the renderer uses to reach the host. Electron's preload provides it over IPC and
 * web mode provides it over HTTP, so the renderer never knows which one it runs in.
 * It moves to `packages/core` once the server needs to know it too.
 */
export interface DesktopApi {
  getAppInfo(): Promise<AppInfo>;
}

export type AppMode = "electron" | "web";

export interface AppInfo {
  readonly name: string;
  readonly version: string;
  /** How the renderer is being served: inside Electron, or to a browser by `src/web`. */
  readonly mode: AppMode;
}

export type DesktopApiMethod = keyof DesktopApi;

/** Listing every method as a record key makes the compiler reject a method added to the API but not here. */
const methodPresence: Record<DesktopApiMethod, true> = { getAppInfo: true };

/** Every method of the API, so each transport wires them all without naming them again. */
export const DESKTOP_API_METHODS = Object.freeze(Object.keys(methodPresence) as DesktopApiMethod[]);

/** The name under which the preload exposes the API on `window`. */
export const DESKTOP_API_GLOBAL = "tandem";
