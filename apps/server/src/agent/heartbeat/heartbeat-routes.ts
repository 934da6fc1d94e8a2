import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { readInstructions, writeInstructions } from "./heartbeat-instructions";
import { policyJson, readPolicy, updatePolicy } from "./heartbeat-policy";
import type { Heartbeats } from "./heartbeat-service";
import { getRun, listRuns } from "./heartbeat-store";

type HeartbeatRouteId =
  | "getHeartbeatPolicy"
  | "setHeartbeatPolicy"
  | "runHeartbeat"
  | "listHeartbeatRuns"
  | "getHeartbeatRun"
  | "heartbeatStatus"
  | "getHeartbeatInstructions"
  | "putHeartbeatInstructions";

export function heartbeatHandlers(app: AppContext, heartbeats: Heartbeats): RouteHandlers<HeartbeatRouteId> {
  const { db, clock } = app;
  return {
    getHeartbeatPolicy: async ({ principal }) => ({ success: true, policy: policyJson(await readPolicy(db, principal.userId)) }),
    setHeartbeatPolicy: async ({ input, principal }) => ({
      success: true,
      policy: policyJson(await updatePolicy(db, principal.userId, input.body, clock.now())),
    }),
    runHeartbeat: async ({ input, principal }) => ({
      success: true,
      result: await heartbeats.runNow(principal.userId, principal.credential, input.body),
    }),
    listHeartbeatRuns: async ({ input, principal }) => ({ success: true, runs: await listRuns(db, principal.userId, input.query.limit) }),
    getHeartbeatRun: async ({ input, principal }) => ({ success: true, ...(await getRun(db, principal.userId, input.params.id)) }),
    heartbeatStatus: async ({ principal }) => ({ success: true, status: await heartbeats.status(principal.userId) }),
    getHeartbeatInstructions: async ({ principal }) => ({ success: true, ...(await readInstructions(app, principal.userId)) }),
    putHeartbeatInstructions: async ({ input, principal }) => ({
      success: true,
      ...(await writeInstructions(app, principal.userId, input.body.content)),
    }),
  };
}
