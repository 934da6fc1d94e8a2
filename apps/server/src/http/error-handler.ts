import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "pino";
import { isStorageFailure } from "../db/storage-failure";
import { ApiError, storageUnavailable } from "./errors";

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/** Maps body-parser's failures (which never reach our handlers) to API errors. */
function fromBodyParser(error: BodyParserError): ApiError | null {
  switch (error.type) {
    case "entity.parse.failed":
      return new ApiError(400, "invalid_json", `The body is not valid JSON: ${error.message}`);
    case "entity.too.large":
      return new ApiError(413, "payload_too_large", `The body is larger than this route accepts (${error.limit} bytes)`);
    case "encoding.unsupported":
    case "charset.unsupported":
      return new ApiError(415, "unsupported_encoding", error.message);
    case "request.aborted":
      return new ApiError(400, "request_aborted", "The request body was cut off");
    case "request.size.invalid":
      return new ApiError(400, "invalid_content_length", "The body's length does not match Content-Length");
    case "stream.encoding.set":
    case "stream.not.readable":
      return new ApiError(400, "unreadable_body", "The request body could not be read");
    default:
      return null;
  }
}

/**
 * What a failure to read a request body means to the client. Body-parser marks its own errors
 * with a `type`; a body that does not decompress as its Content-Encoding says (zlib, brotli or
 * zstd failing) comes through as a bare 400 without one.
 */
export function bodyError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof ApiError) return error;
  const known = fromBodyParser(error as BodyParserError);
  if (known) return known;
  const status = (error as BodyParserError).status;
  if (status !== undefined && status >= 400 && status < 500) {
    return new ApiError(400, "invalid_content_encoding", `The body could not be decoded as its Content-Encoding says: ${error.message}`);
  }
  return error;
}

export function sendError(res: Parameters<RequestHandler>[1], error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json({ success: false, error: error.code, message: error.message });
}

/**
 * Every error becomes `{success:false, error, message}`; storage that fails (full, read-only,
 * unreachable) is a 503; only our own bugs are 500s. Both are logged.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const apiError = error instanceof ApiError ? error : error instanceof Error ? fromBodyParser(error as BodyParserError) : null;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (apiError) {
      sendError(res, apiError);
      return;
    }
    if (isStorageFailure(error)) {
      logger.error({ err: error, method: req.method, path: req.path }, "storage failed");
      sendError(res, storageUnavailable());
      return;
    }
    logger.error({ err: error, method: req.method, path: req.path }, "unhandled error");
    sendError(res, new ApiError(500, "internal_error", "The server failed to handle this request; it has been logged"));
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, new ApiError(404, "route_not_found", `No route ${req.method} ${req.originalUrl.split("?")[0]}`));
};
