import type { DesktopApi } from "../../shared/desktop-api";

/**
 * Opens a link outside the app: Electron's host hands it to the system browser; web mode cannot
 * (the host may run elsewhere than the browser), so it answers `opened: false` and the page opens
 * a tab itself.
 */
export async function openLink(api: DesktopApi, url: string): Promise<void> {
  const { opened } = await api.openExternal({ url });
  if (!opened) window.open(url, "_blank", "noopener,noreferrer");
}
