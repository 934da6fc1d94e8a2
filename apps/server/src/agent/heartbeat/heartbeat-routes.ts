import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { requireActionScopes, requireChecklistScopes, setterOf } from "./heartbeat-credential";
import { readInstructions, writeInstructions } from "./heartbeat-instructions";
import { policyJson, readPolicy, updatePolicy } from "./heartbeat-policy";
import type { Heartbeats } from "./heartbeat-service";
import { getRun, listRuns } from "./heartbeat-store";
import { seenRunDetail, seenRuns } from "./heartbeat-visibility";

type HeartbeatRouteId =
  | "getHeartbeatPolicy"
  | "setHeartbeatPolicy"
  | "runHeartbeat"
  | "listHeartbeatRuns"
  | "getHeartbeatRun"
  | "heartbeatStatus"
  | "getHeartbeatInstructions"
  | "putHeartbeatInstructions";

// Run records are shown through `seenRuns` / `seenRunDetail`: what a run read is shown only to a
// caller whose own scopes may read it.
export function heartbeatHandlers(app: AppContext, heartbeats: Heartbeats): RouteHandlers<HeartbeatRouteId> {
  const { db, clock } = app;
  return {
    getHeartbeatPolicy: async ({ principal }) => ({ success: true, policy: policyJson(await readPolicy(db, principal.userId)) }),
    setHeartbeatPolicy: async ({ input, principal }) => {
      if (input.body.tier === "ACTIONS") requireActionScopes(principal.credential.scopes);
      const policy = await updatePolicy(db, principal.userId, input.body, clock.now(), setterOf(principal.credential));
      return { success: true, policy: policyJson(policy) };
    },
    runHeartbeat: async ({ input, principal }) => {
      const result = await heartbeats.runNow(principal.userId, principal.credential, input.body);
      const seen = seenRunDetail(result, result.actions, principal.credential.scopes);
      return { success: true, result: { ...seen.run, actions: seen.actions } };
    },
    listHeartbeatRuns: async ({ input, principal }) => ({
      success: true,
      runs: await seenRuns(db, await listRuns(db, principal.userId, input.query.limit), principal.credential.scopes),
    }),
    getHeartbeatRun: async ({ input, principal }) => {
      const { run, actions } = await getRun(db, principal.userId, input.params.id);
      return { success: true, ...seenRunDetail(run, actions, principal.credential.scopes) };
    },
    heartbeatStatus: async ({ principal }) => {
      const status = await heartbeats.status(principal.userId);
      const [lastRun = null] = status.lastRun ? await seenRuns(db, [status.lastRun], principal.credential.scopes) : [];
      return { success: true, status: { ...status, lastRun } };
    },
    getHeartbeatInstructions: async ({ principal }) => ({ success: true, ...(await readInstructions(app, principal.userId)) }),
    putHeartbeatInstructions: async ({ input, principal }) => {
      requireChecklistScopes(principal.credential.scopes);
      return { success: true, ...(await writeInstructions(app, principal.userId, input.body.content)) };
    },
  };
}
