import type { IncomingMessage } from "node:http";
import { text } from "node:stream/consumers";
import { HostRefusal } from "../host/host-refusal";
import type { DesktopApi } from "../shared/desktop-api";
import { HOST_API_PATH, invokeDesktopApi, isDesktopApiMethod } from "../shared/desktop-api-transport";
import { type RequestHandler, sendJson, sendJsonError, sendText } from "./http";

/** Arguments are small values (ids, titles, settings); a bigger body is a mistake. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Answers `POST <HOST_API_PATH><method>`, whose JSON body is the argument list, with
 * `{ success: true, result }`, or with a string result as the body itself (`text/plain`: a
 * result of several MB, the workspace's outline, is not escaped into JSON here and parsed out of it
 * again in the page, which took longer than all else the page does with it). Requiring a JSON content type makes browsers preflight cross-origin
 * calls, which this server never approves, so no other web page can call the host.
 */
export function createHostApiHandler(api: DesktopApi): RequestHandler {
  return async (request, response) => {
    const method = new URL(request.url ?? "/", "http://localhost").pathname.slice(HOST_API_PATH.length);
    if (!isDesktopApiMethod(method)) {
      sendJsonError(response, 404, "unknown_method", `The desktop API has no method "${method}"`);
      return;
    }
    if (request.method !== "POST") {
      sendJsonError(response, 405, "method_not_allowed", "Desktop API calls are POST requests");
      return;
    }
    if (!request.headers["content-type"]?.startsWith("application/json")) {
      sendJsonError(response, 415, "unsupported_media_type", "Send the arguments as application/json");
      return;
    }
    if (!(Number(request.headers["content-length"]) <= MAX_BODY_BYTES)) {
      sendJsonError(response, 413, "payload_too_large", `Send a Content-Length of at most ${MAX_BODY_BYTES} bytes`);
      return;
    }
    const args = await readArguments(request);
    if (!args) {
      sendJsonError(response, 400, "invalid_arguments", "The body must be a JSON array of arguments");
      return;
    }
    try {
      const result = await invokeDesktopApi(api, method, args);
      if (typeof result === "string") sendText(response, result);
      else sendJson(response, 200, { success: true, result });
    } catch (error) {
      // A refusal (a bad argument, a key the server refused) is the caller's 4xx; anything else is the host's fault.
      if (error instanceof HostRefusal)
        sendJsonError(response, error.status, error.status === 400 ? "invalid_input" : "host_refused", error.message);
      else sendJsonError(response, 500, "host_error", error instanceof Error ? error.message : String(error));
    }
  };
}

async function readArguments(request: IncomingMessage): Promise<unknown[] | undefined> {
  try {
    const args: unknown = JSON.parse(await text(request));
    return Array.isArray(args) ? args : undefined;
  } catch {
    return undefined;
  }
}
