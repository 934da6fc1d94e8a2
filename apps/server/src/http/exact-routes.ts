import type { NextFunction, Request, RequestHandler, Response } from "express";

/** A route as Express sees it: its method, its path pattern, and what runs it. */
export interface RegisteredRoute {
  readonly method: string;
  readonly path: string;
  readonly run: (req: Request, res: Response) => Promise<void>;
}

/** Paths made of literal segments and `:name` parameters only, the only kind the route table uses. */
const SIMPLE_PATTERN = /^(\/(:?[A-Za-z0-9_-]+))+$/;

/**
 * Whether Express would match `path` (literal, exact) against `pattern`: it compares letters
 * case-insensitively, and a `:name` segment takes any one non-empty segment.
 */
function patternMatches(pattern: string, path: string): boolean {
  const expected = pattern.split("/");
  const actual = path.split("/");
  return (
    expected.length === actual.length &&
    expected.every((segment, i) => segment.startsWith(":") || segment.toLowerCase() === actual[i]?.toLowerCase())
  );
}

/**
 * A middleware for the application, to go right before the router built from `registered` is
 * mounted at `basePath`, that runs a route without parameters straight from a map when the
 * request names it exactly (`GET /api/v1/os/folders`). Express would get there through the
 * mounted router, trying each route's regular expression in turn: a cost every request paid.
 *
 * It only takes requests Express would send to that same route: the method as declared (not
 * HEAD or OPTIONS, which Express answers in its own ways), the path exactly as declared (no
 * trailing slash, the same letter case), and only routes that no earlier route of the same method
 * could match. Everything else goes on to Express's routing, as before. The handler sees the
 * request as the mounted router would show it (`baseUrl` is the base path, `url` is below it).
 */
export function exactRoutes(basePath: string, registered: readonly RegisteredRoute[]): RequestHandler {
  /** Method, then full path: two lookups with strings the request has, rather than building a key. */
  const byMethod = new Map<string, Map<string, RegisteredRoute["run"]>>();
  registered.forEach((route, index) => {
    if (route.path.includes(":") || !SIMPLE_PATTERN.test(route.path)) return;
    const earlier = registered.slice(0, index).filter((other) => other.method === route.method);
    // A pattern we cannot read might match anything: leave the route to Express.
    if (earlier.some((other) => !SIMPLE_PATTERN.test(other.path) || patternMatches(other.path, route.path))) return;
    const byPath = byMethod.get(route.method) ?? new Map();
    byMethod.set(route.method, byPath.set(`${basePath}${route.path}`, route.run));
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const { url, baseUrl } = req;
    // An absolute-form request target (`GET http://host/…`) is left to Express, which handles it.
    const run = url.startsWith(basePath) ? byMethod.get(req.method)?.get(req.path) : undefined;
    if (!run) {
      next();
      return;
    }
    req.baseUrl = basePath;
    req.url = url.slice(basePath.length);
    run(req, res).catch((error: unknown) => {
      // As the mounted router does when a route fails: the request as it came, and the error on
      // to the error handlers (what Express makes of a handler's rejected promise).
      req.url = url;
      req.baseUrl = baseUrl;
      next(error || new Error("Rejected promise"));
    });
  };
}
