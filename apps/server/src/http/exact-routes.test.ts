import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type Response, Router } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exactRoutes, type RegisteredRoute } from "./exact-routes";

/** Routes as the route table would give them, including one an earlier pattern shadows. */
const ROUTES = [
  ["GET", "/items/:id"],
  ["GET", "/items/special"],
  ["GET", "/a"],
  ["POST", "/a"],
  ["GET", "/b/c"],
  ["PUT", "/b/:name"],
  ["GET", "/fails"],
] as const;

/** An API mounted at `/api`; `dispatched` records which requests each way of dispatching ran. */
function app(withExactRoutes: boolean, dispatched: string[]) {
  const answer = (route: string, via: string) => async (req: Request, res: Response) => {
    dispatched.push(`${via}: ${req.method} ${req.originalUrl}`);
    if (route === "GET /fails") throw new Error("handler failed");
    // What the handler sees of the request, which must not depend on how it was dispatched.
    res.json({ route, params: req.params, query: req.query, url: req.url, baseUrl: req.baseUrl, path: req.path });
  };
  const registered: RegisteredRoute[] = ROUTES.map(([method, path]) => ({ method, path, run: answer(`${method} ${path}`, "exact") }));
  const router = Router();
  for (const [method, path] of ROUTES) router[method.toLowerCase() as "get" | "post" | "put"](path, answer(`${method} ${path}`, "express"));
  const application = express();
  if (withExactRoutes) application.use(exactRoutes("/api", registered));
  application.use("/api", router);
  application.use((error: Error, req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: error.message, url: req.url, baseUrl: req.baseUrl, path: req.path });
  });
  return application;
}

const REQUESTS: [string, string][] = [
  ["GET", "/api/a"],
  ["GET", "/api/a?x=1"],
  ["GET", "/api/A"],
  ["GET", "/api/a/"],
  ["HEAD", "/api/a"],
  ["OPTIONS", "/api/a"],
  ["POST", "/api/a"],
  ["DELETE", "/api/a"],
  ["GET", "/api/items/special"],
  ["GET", "/api/items/1"],
  ["GET", "/api/b/c"],
  ["PUT", "/api/b/c"],
  ["GET", "/api/b/c/d"],
  ["GET", "/api/fails"],
  ["GET", "/apia"],
  ["GET", "/API/a"],
  ["GET", "/api//a"],
];

describe("exactRoutes", () => {
  const servers: { close(): void; url: string }[] = [];
  const fastDispatch: string[] = [];

  beforeAll(async () => {
    for (const withExact of [false, true]) {
      const server = app(withExact, withExact ? fastDispatch : []).listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      servers.push({ close: () => server.close(), url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    }
  });

  afterAll(() => {
    for (const server of servers) server.close();
  });

  it("answers every request as Express's routing alone does", async () => {
    for (const [method, path] of REQUESTS) {
      const [plain, exact] = await Promise.all(
        servers.map(async ({ url }) => {
          const response = await fetch(`${url}${path}`, { method });
          return { status: response.status, allow: response.headers.get("allow"), body: await response.text() };
        }),
      );
      expect(exact, `${method} ${path}`).toEqual(plain);
    }
  });

  it("takes only unshadowed routes named exactly, with their declared method", async () => {
    fastDispatch.length = 0;
    const { url } = servers[1] as (typeof servers)[number];
    for (const [method, path] of REQUESTS) await fetch(`${url}${path}`, { method });
    expect(fastDispatch).toEqual([
      "exact: GET /api/a",
      "exact: GET /api/a?x=1",
      "express: GET /api/A",
      "express: GET /api/a/",
      "express: HEAD /api/a",
      "exact: POST /api/a",
      // Express gives it to the earlier `/items/:id`, so the exact lookup must leave it alone.
      "express: GET /api/items/special",
      "express: GET /api/items/1",
      "exact: GET /api/b/c",
      "express: PUT /api/b/c",
      "exact: GET /api/fails",
      "express: GET /API/a",
    ]);
  });
});
