import { accumulateRoutes } from "./accumulate";
import { folderRoutes } from "./folders";
import { noteRoutes } from "./notes";
import { snapshotRoutes } from "./snapshots";
import { systemRoutes } from "./system";
import { todoRoutes } from "./todos";
import { workspaceRoutes } from "./workspace";

/** Every operation of the v1 API, by id. */
export const routes = {
  ...workspaceRoutes,
  ...folderRoutes,
  ...noteRoutes,
  ...snapshotRoutes,
  ...todoRoutes,
  ...accumulateRoutes,
  ...systemRoutes,
} as const;

export type Routes = typeof routes;
export type RouteId = keyof Routes;

export * from "./accumulate";
export * from "./common";
export * from "./folders";
export * from "./notes";
export * from "./route";
export * from "./snapshots";
export * from "./todos";
export * from "./workspace";
