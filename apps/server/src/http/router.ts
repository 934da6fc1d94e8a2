import {
  DEFAULT_BODY_LIMIT,
  type HttpMethod,
  type NetAliasId,
  type RouteDefinition,
  type RouteId,
  type Routes,
  routes,
  type ValidatedInput,
} from "@tandem/core";
import express, { type Request, type RequestHandler, type Response, Router } from "express";
import type { Authenticator } from "../auth/authenticator";
import type { DevicePrincipal, Principal, UserPrincipal } from "../auth/principal";
import { setRequestUser } from "./access-log";
import { bodyError } from "./error-handler";
import { ApiError } from "./errors";
import { exactRoutes, type RegisteredRoute } from "./exact-routes";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "./json-depth";
import { JsonText, Reply } from "./reply";
import { validateInput } from "./validate";

export interface HandlerContext<R extends RouteDefinition> {
  readonly input: ValidatedInput<R>;
  /** The caller, of the credential kind the route accepts; `null` only on public routes. */
  readonly principal: PrincipalFor<R["auth"]>;
  readonly req: Request;
  /** For handlers that answer by themselves (event streams); they return {@link HANDLED}. */
  readonly res: Response;
}

/** Returned by a handler that has written its own response. */
export const HANDLED: unique symbol = Symbol("handled");

type PrincipalFor<A extends RouteDefinition["auth"]> = A extends "public"
  ? Principal | null
  : A extends "user"
    ? UserPrincipal
    : A extends "device"
      ? DevicePrincipal
      : Principal;

export type RouteHandler<R extends RouteDefinition> = (context: HandlerContext<R>) => Promise<unknown> | unknown;

/** A handler for every route in a group; the compiler makes sure none is missing. */
export type RouteHandlers<Ids extends RouteId> = { [K in Ids]: RouteHandler<Routes[K]> };

/** The routes with handlers of their own: an alias (`aliasOf`) is answered by its original's. */
export type HandledRouteId = Exclude<RouteId, NetAliasId>;

/**
 * Refuses, before parsing, JSON nested deeper than {@link MAX_JSON_DEPTH}, and JSON in another
 * charset than UTF-8 (RFC 8259: JSON between systems is UTF-8), whose bytes the check cannot read.
 */
function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding !== "utf-8") throw new ApiError(415, "unsupported_encoding", `JSON bodies must be UTF-8, not ${encoding}`);
  if (jsonNestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw new ApiError(400, "json_too_deep", `The body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  }
}

/**
 * JSON bodies are parsed whatever the Content-Type says: scripts often post JSON with curl's
 * default form type, and a clear "invalid JSON" is better than an empty body.
 */
export function jsonParser(limit: number) {
  return express.json({ limit, type: () => true, strict: true, verify: refuseDeepJson });
}

/**
 * What `res.json` does once it has serialised its value: the same headers, the same bytes. The
 * usual case (a 200 to a GET or POST with no conditional headers, nothing set before, no ETag
 * function, as our app has) writes the two headers `res.send` would and ends the response
 * itself: `res.send` would work out the charset of a type it was just given (parsing and
 * formatting the Content-Type twice), copy the body into a Buffer to count its bytes, and look
 * at the conditional headers that make a response fresh. Anything else goes through `res.send`.
 */
function sendJsonText(res: Response, text: string): void {
  const { method, headers } = res.req;
  const plain =
    res.statusCode === 200 &&
    method !== "HEAD" &&
    headers["if-none-match"] === undefined &&
    headers["if-modified-since"] === undefined &&
    !res.hasHeader("content-type") &&
    !res.hasHeader("content-length") &&
    !res.hasHeader("transfer-encoding") &&
    !res.hasHeader("etag") &&
    res.app.get("etag fn") === undefined;
  if (plain) {
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Content-Length", Buffer.byteLength(text));
    res.end(text);
    return;
  }
  if (!res.get("Content-Type")) res.set("Content-Type", "application/json");
  res.send(text);
}

function send(res: Response, result: unknown): void {
  if (result === HANDLED) return;
  if (result instanceof JsonText) {
    sendJsonText(res, result.text);
    return;
  }
  if (result instanceof Reply) {
    if (result.contentType === "html") res.status(result.status).type("html").send(result.body);
    else res.status(result.status).json(result.body);
    return;
  }
  // What `res.json` would serialise, with the app's JSON settings as ours are (none set), sent the same way.
  if (typeof result === "object" && result !== null && plainJsonSettings(res)) {
    const text = JSON.stringify(result);
    if (typeof text === "string") {
      sendJsonText(res, text);
      return;
    }
  }
  res.json(result);
}

/** Whether `res.json` serialises as `JSON.stringify(value)` does: no replacer, spacing or escaping set on the app. */
function plainJsonSettings(res: Response): boolean {
  const { app } = res;
  return app.get("json replacer") === undefined && app.get("json spaces") === undefined && !app.get("json escape");
}

/** Reads a JSON body with body-parser, as the middleware it is made to be; its failures are the client's. */
export function readBody(parser: ReturnType<typeof jsonParser>, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => parser(req, res, (error?: unknown) => (error ? reject(bodyError(error)) : resolve())));
}

/** Everything a route does with a request, as one Express layer rather than one per step. */
function runRoute(route: RouteDefinition, handler: RouteHandler<RouteDefinition>, authenticator: Authenticator) {
  // A DELETE reads a body only when its route declares one (forgetting a raw memory device carries the rotated key).
  const parser =
    route.method === "GET" || (route.method === "DELETE" && !route.body) ? undefined : jsonParser(route.bodyLimit ?? DEFAULT_BODY_LIMIT);
  const scopes = [...(route.scope ? [route.scope] : []), ...(route.alsoRequires ?? [])];
  return async (req: Request, res: Response): Promise<void> => {
    const principal =
      route.auth === "public"
        ? null
        : await authenticator.authenticate(req.headers, req.socket.remoteAddress ?? "unknown", route.auth, scopes);
    if (principal) setRequestUser(res, principal.userId);
    // Authenticated before the body is read: nobody without a credential makes us parse megabytes.
    if (parser) await readBody(parser, req, res);
    const input = validateInput(route, { params: req.params, query: req.query, body: req.body });
    send(res, await handler({ input, principal: principal as never, req, res }));
  };
}

/** The API as the application mounts it. */
export interface Api {
  /** Every route, matched by Express; mounted at the base path. */
  readonly router: Router;
  /** Goes right before the router's mount: requests naming a route exactly skip Express's matching. */
  readonly exactRoutes: RequestHandler;
}

/** Builds the API from the route table and the handlers, to be mounted at `basePath`. */
export function buildApi(basePath: string, authenticator: Authenticator, handlers: RouteHandlers<HandledRouteId>): Api {
  const handlerFor = (id: string, route: RouteDefinition): RouteHandler<RouteDefinition> => {
    const handler = (handlers as Record<string, RouteHandler<RouteDefinition> | undefined>)[route.aliasOf ?? id];
    if (!handler) throw new Error(`route ${id} has no handler${route.aliasOf ? ` (its original ${route.aliasOf} has none)` : ""}`);
    return handler;
  };
  const registered: RegisteredRoute[] = Object.entries(routes).map(([id, route]: [string, RouteDefinition]) => ({
    method: route.method,
    path: route.path,
    run: runRoute(route, handlerFor(id, route), authenticator),
  }));
  const router = Router();
  for (const { method, path, run } of registered) router[method.toLowerCase() as Lowercase<HttpMethod>](path, run);
  return { router, exactRoutes: exactRoutes(basePath, registered) };
}
