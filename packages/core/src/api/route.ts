import type { z } from "zod";
import type { Scope } from "../scopes";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Who may call a route:
 * - `public`: anyone, no credential;
 * - `user`: a user's API key (`svc_sk_…`);
 * - `device`: a bridge's device token (`svc_dev_…`);
 * - `any`: either kind of credential.
 */
export type RouteAuth = "public" | "user" | "device" | "any";

type AnyObject = z.ZodType<Record<string, unknown>>;

/**
 * One operation of the v1 API. This table is the single source for request validation on the
 * server, the `GET /os` discovery listing, the OpenAPI document and the typed client.
 */
export interface RouteDefinition {
  readonly method: HttpMethod;
  /** Path under `/api/v1`, with Express-style parameters: `/os/notes/:id`. */
  readonly path: string;
  readonly category: string;
  readonly summary: string;
  readonly auth: RouteAuth;
  /** Scope a user key needs; absent means any valid credential of the allowed kind. */
  readonly scope?: Scope;
  /**
   * Scopes a user key needs besides `scope`, for routes that reach into another area: restoring
   * a snapshot rewrites the note, so it needs `os.notes:write` as well as `os.snapshots:write`.
   */
  readonly alsoRequires?: readonly Scope[];
  readonly params?: AnyObject;
  readonly query?: AnyObject;
  readonly body?: z.ZodType;
  /** The largest JSON body accepted, in bytes. Defaults to {@link DEFAULT_BODY_LIMIT}. */
  readonly bodyLimit?: number;
  /** Status for a body that parses but fails validation (400 unless the contract says 422). */
  readonly invalidStatus?: 400 | 422;
  /** The success response (the 200/201 body); for an event stream, the `data:` of one event. */
  readonly response: z.ZodType;
  /**
   * The success body's media type when it is not told by the schema: a string response is an
   * HTML page, anything else JSON, unless this says `text/event-stream` (server-sent events) or
   * `text/plain` (the chat stream: one JSON object per line, which `response` describes).
   */
  readonly responseMediaType?: "text/event-stream" | "text/plain";
  /** The JSON answer of a streaming route that can also answer at once (chat with `stream: false`). */
  readonly jsonResponse?: z.ZodType;
  /** Statuses a success may have; `[200]` unless the route creates things (`[201, 200]`). */
  readonly successStatuses?: readonly number[];
  /** An alias (`/net/...`): the id of the route whose handler answers it, exactly as it answers its own path. */
  readonly aliasOf?: string;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Identity helper that keeps each definition's literal types for the client and handlers. */
export function defineRoute<const R extends RouteDefinition>(route: R): R {
  return route;
}

type Infer<S> = S extends z.ZodType ? z.input<S> : undefined;
type Output<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a caller sends: the route's params, query and body, each only if the route has one. */
export type RouteInput<R extends RouteDefinition> = (R["params"] extends z.ZodType
  ? { params: Infer<R["params"]> }
  : { params?: undefined }) &
  (R["query"] extends z.ZodType ? { query?: Infer<R["query"]> } : { query?: undefined }) &
  (R["body"] extends z.ZodType
    ? undefined extends Infer<R["body"]>
      ? { body?: Infer<R["body"]> }
      : { body: Infer<R["body"]> }
    : { body?: unknown });

/** What a handler receives after validation. */
export interface ValidatedInput<R extends RouteDefinition> {
  params: Output<R["params"]>;
  query: Output<R["query"]>;
  body: Output<R["body"]>;
}

export type RouteResponse<R extends RouteDefinition> = z.input<R["response"]>;
