import { type RouteId, type Routes, routes } from "./api";
import type { ErrorBody } from "./api/common";
import type { RouteDefinition, RouteInput, RouteResponse } from "./api/route";

export interface ApiResult<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** Thrown by {@link TandemClient.call} for any non-2xx answer; carries the error body. */
export class TandemApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Partial<ErrorBody> & Record<string, unknown>,
  ) {
    super(`${status} ${body.error ?? "error"}: ${body.message ?? "no message"}`);
    this.name = "TandemApiError";
  }
}

export interface TandemClientOptions {
  /** The API base, e.g. `http://127.0.0.1:8787/api/v1`. */
  baseUrl: string;
  /** An API key or device token, sent as `Authorization: Bearer`. */
  token?: string;
  fetch?: typeof fetch;
  /**
   * Check every success body against the route's declared response schema and throw on a
   * mismatch. Tests turn this on so the published contract cannot drift from the server.
   */
  validateResponses?: boolean;
}

/** Fills `:name` placeholders from `params`. */
export function buildPath(path: string, params: Record<string, unknown> | undefined): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new Error(`missing path parameter "${name}"`);
    return encodeURIComponent(String(value));
  });
}

/** A typed client for the v1 API, generated from the same route table the server serves. */
export class TandemClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: TandemClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** A client for the same server with another credential. */
  withToken(token: string | undefined): TandemClient {
    return new TandemClient({ ...this.options, token });
  }

  /** Calls a route and answers whatever came back, success or error. */
  async raw<K extends RouteId>(id: K, input?: RouteInput<Routes[K]>): Promise<ApiResult<unknown>> {
    const route: RouteDefinition = routes[id];
    const request = (input ?? {}) as { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };
    const url = new URL(this.baseUrl + buildPath(route.path, request.params));
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    // A DELETE carries a body only when its route declares one (forgetting a raw memory device).
    const hasBody = route.method !== "GET" && (route.method !== "DELETE" || route.body !== undefined);
    if (hasBody) headers["content-type"] = "application/json";
    const response = await this.fetchImpl(url, {
      method: route.method,
      headers,
      body: hasBody ? JSON.stringify(request.body ?? {}) : undefined,
      redirect: "manual",
    });
    const text = await response.text();
    let body: unknown = null;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { status: response.status, headers: response.headers, body };
  }

  /** Calls a route and answers its typed success body; throws {@link TandemApiError} otherwise. */
  async call<K extends RouteId>(id: K, input?: RouteInput<Routes[K]>): Promise<RouteResponse<Routes[K]>> {
    const result = await this.raw(id, input);
    if (result.status < 200 || result.status >= 300) {
      const body =
        typeof result.body === "object" && result.body !== null
          ? (result.body as Record<string, unknown>)
          : { message: String(result.body) };
      throw new TandemApiError(result.status, body);
    }
    if (this.options.validateResponses) {
      const route: RouteDefinition = routes[id];
      const checked = route.response.safeParse(result.body);
      if (!checked.success) throw new Error(`${id}: the response does not match its schema: ${checked.error.message}`);
    }
    return result.body as RouteResponse<Routes[K]>;
  }
}
