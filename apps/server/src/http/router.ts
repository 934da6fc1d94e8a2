import { DEFAULT_BODY_LIMIT, type RouteDefinition, type RouteId, type Routes, routes, type ValidatedInput } from "@tandem/core";
import express, { type NextFunction, type Request, type Response, Router } from "express";
import type { Authenticator } from "../auth/authenticator";
import type { DevicePrincipal, Principal, UserPrincipal } from "../auth/principal";
import { Reply } from "./reply";
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

/**
 * JSON bodies are parsed whatever the Content-Type says: scripts often post JSON with curl's
 * default form type, and a clear "invalid JSON" is better than an empty body.
 */
function jsonParser(limit: number) {
  return express.json({ limit, type: () => true, strict: true });
}

function send(res: Response, result: unknown): void {
  if (result === HANDLED) return;
  if (result instanceof Reply) {
    if (result.contentType === "html") res.status(result.status).type("html").send(result.body);
    else res.status(result.status).json(result.body);
    return;
  }
  res.json(result);
}

/** Builds the Express router for the API from the route table and the handlers. */
export function buildApiRouter(authenticator: Authenticator, handlers: RouteHandlers<RouteId>): Router {
  const router = Router();
  for (const [id, route] of Object.entries(routes) as [RouteId, RouteDefinition][]) {
    const handler = handlers[id] as RouteHandler<RouteDefinition>;
    const method = route.method.toLowerCase() as "get" | "post" | "put" | "patch" | "delete";
    const authenticate = async (req: Request, res: Response, next: NextFunction) => {
      res.locals.principal = route.auth === "public" ? null : await authenticator.authenticate(req.headers, route.auth, route.scope);
      next();
    };
    const parseBody = route.method === "GET" || route.method === "DELETE" ? [] : [jsonParser(route.bodyLimit ?? DEFAULT_BODY_LIMIT)];
    // Authenticate before reading the body: nobody without a credential makes us parse megabytes.
    router[method](route.path, authenticate, ...parseBody, async (req: Request, res: Response) => {
      const input = validateInput(route, { params: req.params, query: req.query, body: req.body });
      send(res, await handler({ input, principal: res.locals.principal as never, req, res }));
    });
  }
  return router;
}
