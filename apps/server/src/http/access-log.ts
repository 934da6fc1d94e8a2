import type { RequestHandler, Response } from "express";
import type { Level, Logger } from "pino";

/** Who a request turned out to be, once a route has authenticated it; the access log reads it at the end. */
export function setRequestUser(res: Response, userId: number): void {
  res.locals.userId = userId;
}

/**
 * One log line per HTTP request when its response ends: method, path, status, duration and the
 * authenticated user's id. Never a secret: the query string is left out (it may carry a code or a
 * token), and so is every header. A response cut off before it finished says `aborted`.
 */
export function accessLog(logger: Logger, level: Level | "silent"): RequestHandler {
  return (req, res, next) => {
    if (level === "silent" || !logger.isLevelEnabled(level)) return next();
    const started = process.hrtime.bigint();
    res.once("close", () => {
      logger[level](
        {
          method: req.method,
          path: req.originalUrl.split("?")[0],
          status: res.statusCode,
          durationMs: Math.round(Number(process.hrtime.bigint() - started) / 10_000) / 100,
          userId: res.locals.userId ?? null,
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        "request",
      );
    });
    next();
  };
}
