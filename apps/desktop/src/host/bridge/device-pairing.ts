import { hostname } from "node:os";
import type { BridgeRuntime, PairingPrompt } from "../../shared/desktop-api";
import { registeredRuntime } from "./bridge-settings";
import { apiErrorCode, delay, wireClient } from "./wire-client";

/** The wire says to poll every 2 s; the server's `interval` is honoured when it says more. */
const MIN_POLL_INTERVAL_MS = 2_000;

export type PairingOutcome =
  | { readonly status: "approved"; readonly deviceToken: string; readonly endpointId: string; readonly userId: number }
  | { readonly status: "denied" | "expired" | "consumed" | "cancelled" };

export interface DevicePairing {
  readonly prompt: PairingPrompt;
  /** Settles once the owner approved or denied, the code expired, or {@link cancel} was called. */
  readonly outcome: Promise<PairingOutcome>;
  cancel(): void;
}

export interface DevicePairingOptions {
  readonly serverUrl: string;
  readonly deviceId: string;
  readonly runtime: BridgeRuntime;
  readonly bridgeVersion: string;
}

/**
 * Pairs this app as a runtime endpoint by device code: `start` without a credential (`Bearer
 * anonymous`), then `poll` in the background until the owner approves at `approvalUrl` (the token
 * comes exactly once), denies, or the code expires. Transport errors only delay the next poll.
 */
export async function startDevicePairing(options: DevicePairingOptions): Promise<DevicePairing> {
  const anonymous = wireClient(options.serverUrl, "anonymous");
  const started = await anonymous.call("startDeviceCode", {
    body: {
      deviceId: options.deviceId,
      runtime: registeredRuntime(options.runtime),
      bridgeVersion: options.bridgeVersion,
      adapterVersion: options.runtime,
      capabilities: ["task_invite", "text", "resource_request"],
      label: `Tandem desktop on ${hostname()}`.slice(0, 200),
    },
  });
  const controller = new AbortController();
  const interval = Math.max(MIN_POLL_INTERVAL_MS, started.interval * 1_000);
  const expiresAt = Date.parse(started.expiresAt);

  const outcome = (async (): Promise<PairingOutcome> => {
    while (!controller.signal.aborted) {
      await delay(interval, controller.signal);
      if (controller.signal.aborted) break;
      try {
        const polled = await anonymous.call("pollDeviceCode", { body: { pollToken: started.pollToken } });
        if (polled.status === "approved" && polled.deviceToken && polled.endpointId && polled.userId !== undefined) {
          return { status: "approved", deviceToken: polled.deviceToken, endpointId: polled.endpointId, userId: polled.userId };
        }
        if (polled.status === "denied" || polled.status === "expired" || polled.status === "consumed") return { status: polled.status };
      } catch (error) {
        if (apiErrorCode(error) === "pairing_not_found") return { status: "expired" };
        // Otherwise (offline, a timeout, a 5xx): poll again until the code expires.
      }
      if (Date.now() > expiresAt) return { status: "expired" };
    }
    return { status: "cancelled" };
  })();

  return {
    prompt: { userCode: started.userCode, approvalUrl: started.approvalUrl, expiresAt: started.expiresAt },
    outcome,
    cancel: () => controller.abort(),
  };
}
