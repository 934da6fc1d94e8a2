import { folderRoutes } from "./folders";
import { systemRoutes } from "./system";
import { workspaceRoutes } from "./workspace";

/** Every operation of the v1 API, by id. */
export const routes = {
  ...workspaceRoutes,
  ...folderRoutes,
  ...systemRoutes,
} as const;

export type Routes = typeof routes;
export type RouteId = keyof Routes;

export * from "./common";
export * from "./folders";
export * from "./route";
export * from "./workspace";
