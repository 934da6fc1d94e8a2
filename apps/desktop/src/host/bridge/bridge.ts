import type { BridgeStatus } from "../../shared/desktop-api";
import type { BridgeFacet } from "../facets";
import { notBuilt } from "../facets";
import type { HostContext } from "../host-context";

export interface BridgeHandle {
  readonly facet: BridgeFacet;
  status(): BridgeStatus;
  /** Tool calls waiting for the owner. */
  pendingApprovals(): number;
  close(): Promise<void>;
}

/** Resumes the paired bridge, if any. Stub until the bridge is built. */
export async function startBridge(_context: HostContext): Promise<BridgeHandle> {
  const status: BridgeStatus = { state: "unpaired", runtime: null, endpointId: null, pairing: null, activeTasks: 0, message: null };
  return {
    status: () => status,
    pendingApprovals: () => 0,
    facet: {
      getBridgeStatus: async () => status,
      startBridgePairing: async () => notBuilt("Pairing the bridge"),
      unpairBridge: async () => status,
      listApprovals: async () => [],
      resolveApproval: async () => notBuilt("Approvals"),
      listGrants: async () => [],
      acceptGrant: async () => notBuilt("Grants"),
      declineGrant: async () => notBuilt("Grants"),
      revokeGrant: async () => notBuilt("Grants"),
    },
    close: async () => {},
  };
}
