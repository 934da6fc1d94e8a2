import type { DesktopApi } from "../shared/desktop-api";
import { createDesktopApiClient, HOST_API_PATH } from "../shared/desktop-api-transport";

/** A quarter of the browsers' 64 KB for requests outliving the page, counting a character as up to 4 bytes. */
const KEEPALIVE_MAX_CHARS = 4_000;

type HostApiResponse = { success: true; result: unknown } | { success: false; error: string; message: string };

/** A browser has no preload: the web server (`src/web`) answers the same calls over HTTP instead. */
export function createWebDesktopApi(): DesktopApi {
  return createDesktopApiClient(async (method, args) => {
    const payload = JSON.stringify(args);
    const response = await fetch(`${HOST_API_PATH}${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: payload,
      // A draft written as the page goes away (reload, tab closed) must still reach the host; browsers
      // carry such requests only up to 64 KB in all, so a longer draft goes as any other call.
      keepalive: method === "saveDraft" && payload.length <= KEEPALIVE_MAX_CHARS,
    });
    // A string result comes as the body itself (see web/host-api-handler.ts).
    if (response.ok && response.headers.get("content-type")?.startsWith("text/plain")) return response.text();
    const body = (await response.json()) as HostApiResponse;
    // The host's sentence alone: the method's name means nothing to the person reading it.
    if (!body.success) throw new Error(body.message);
    return body.result;
  });
}
