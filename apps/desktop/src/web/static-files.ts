import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { type RequestHandler, sendJsonError } from "./http";

/** The file types a Vite build of the renderer emits. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

/**
 * Files up to this size are sent in one write: the page's bundle (about 1 MB) streamed in 64 KB chunks
 * costs the host's thread, which also answers the page's first calls, several times as much.
 */
const ONE_WRITE_MAX_BYTES = 8 * 1024 * 1024;

/** Serves the files under `rootDir` read-only, `/` being its `index.html`; nothing outside `rootDir` is reachable. */
export function createStaticFileHandler(rootDir: string): RequestHandler {
  const root = path.resolve(rootDir);
  return async (request, response) => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      sendJsonError(response, 405, "method_not_allowed", "Only GET and HEAD are served here");
      return;
    }
    const filePath = resolveInside(root, request.url ?? "/");
    const stats = filePath ? await stat(filePath).catch(() => undefined) : undefined;
    if (!filePath || !stats?.isFile()) {
      sendJsonError(response, 404, "not_found", "No such file");
      return;
    }
    response.writeHead(200, {
      "content-type": CONTENT_TYPES[path.extname(filePath)] ?? "application/octet-stream",
      "content-length": stats.size,
      // Rebuilds reuse index.html's name; hashed assets change names, so revalidating costs little.
      "cache-control": "no-cache",
    });
    if (request.method === "HEAD") {
      response.end();
      return;
    }
    if (stats.size <= ONE_WRITE_MAX_BYTES) response.end(await readFile(filePath));
    else await pipeline(createReadStream(filePath), response);
  };
}

/** Maps a request URL to a file path under `root`, or undefined when it is malformed or points outside. */
function resolveInside(root: string, requestUrl: string): string | undefined {
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(requestUrl, "http://localhost").pathname);
  } catch {
    return undefined;
  }
  const filePath = path.resolve(root, pathname === "/" ? "index.html" : `.${pathname}`);
  return filePath.startsWith(root + path.sep) ? filePath : undefined;
}
