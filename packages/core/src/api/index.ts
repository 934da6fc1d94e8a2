import { accountRoutes } from "./account";
import { accumulateRoutes } from "./accumulate";
import { agentRoutes } from "./agent";
import { agentUsageRoutes } from "./agent-usage";
import { approvalRoutes } from "./approvals";
import { auditRoutes } from "./audit";
import { briefingRoutes } from "./briefing";
import { delegationRoutes } from "./delegations";
import { escalationRoutes } from "./escalations";
import { folderRoutes } from "./folders";
import { grantRoutes } from "./grants";
import { heartbeatRoutes } from "./heartbeat";
import { managedAgentRoutes } from "./managed-agents";
import { messageRequestRoutes, messagingRoutes } from "./messaging";
import { meteringRoutes } from "./metering";
import { netAliasRoutes, netRoutes } from "./net";
import { networkRoutes } from "./network";
import { noteRoutes } from "./notes";
import { rawMemoryRoutes } from "./raw-memory";
import { realtimeRoutes } from "./realtime";
import { runtimeRoutes } from "./runtime";
import { shareRoutes } from "./share";
import { snapshotRoutes } from "./snapshots";
import { syncRoutes } from "./sync";
import { systemRoutes } from "./system";
import { teamRoutes } from "./team";
import { todoRoutes } from "./todos";
import { toolRoutes } from "./tools";
import { trashRoutes } from "./trash";
import { webhookRoutes } from "./webhooks";
import { workspaceRoutes } from "./workspace";

/** Every operation of the v1 API, by id. */
export const routes = {
  ...workspaceRoutes,
  ...folderRoutes,
  ...noteRoutes,
  ...trashRoutes,
  ...snapshotRoutes,
  ...todoRoutes,
  ...accumulateRoutes,
  ...systemRoutes,
  ...networkRoutes,
  ...runtimeRoutes,
  ...grantRoutes,
  ...approvalRoutes,
  ...delegationRoutes,
  ...realtimeRoutes,
  ...auditRoutes,
  ...agentUsageRoutes,
  ...syncRoutes,
  // Before agentRoutes: its GET /conversations/:id would take /conversations/requests.
  ...messageRequestRoutes,
  ...agentRoutes,
  ...briefingRoutes,
  ...heartbeatRoutes,
  ...toolRoutes,
  ...messagingRoutes,
  ...shareRoutes,
  ...teamRoutes,
  ...netRoutes,
  ...netAliasRoutes,
  ...accountRoutes,
  ...webhookRoutes,
  ...managedAgentRoutes,
  ...rawMemoryRoutes,
  ...meteringRoutes,
  ...escalationRoutes,
} as const;

export type Routes = typeof routes;
export type RouteId = keyof Routes;

export * from "./account";
export * from "./accumulate";
export * from "./agent";
export * from "./agent-usage";
export * from "./approvals";
export * from "./audit";
export * from "./briefing";
export * from "./common";
export * from "./delegations";
export * from "./escalations";
export * from "./folders";
export * from "./grants";
export * from "./heartbeat";
export * from "./managed-agents";
export * from "./messaging";
export * from "./metering";
export * from "./net";
export * from "./network";
export * from "./notes";
export * from "./raw-memory";
export * from "./realtime";
export * from "./route";
export * from "./runtime";
export * from "./share";
export * from "./snapshots";
export * from "./sync";
export * from "./team";
export * from "./todos";
export * from "./tools";
export * from "./trash";
export * from "./webhooks";
export * from "./workspace";
