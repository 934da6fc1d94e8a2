import type { DesktopApi } from "../shared/desktop-api";
import { createDesktopApiClient, HOST_API_PATH } from "../shared/desktop-api-transport";

type HostApiResponse = { success: true; result: unknown } | { success: false; error: string; message: string };

/** A browser has no preload: the web server (`src/web`) answers the same calls over HTTP instead. */
export function createWebDesktopApi(): DesktopApi {
  return createDesktopApiClient(async (method, args) => {
    const response = await fetch(`${HOST_API_PATH}${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args),
    });
    // A string result comes as the body itself (see web/host-api-handler.ts).
    if (response.ok && response.headers.get("content-type")?.startsWith("text/plain")) return response.text();
    const body = (await response.json()) as HostApiResponse;
    // The host's sentence alone: the method's name means nothing to the person reading it.
    if (!body.success) throw new Error(body.message);
    return body.result;
  });
}
