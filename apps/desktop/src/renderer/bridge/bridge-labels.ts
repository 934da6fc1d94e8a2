import type { BridgeRuntime, BridgeState } from "../../shared/desktop-api";

export const RUNTIME_LABELS: Readonly<Record<BridgeRuntime, string>> = {
  "claude-code": "Claude Code",
  codex: "Codex",
  fake: "Scripted runtime (tests)",
};

/** The runtimes an owner can choose; `fake` exists only for tests, which force it in the host config. */
export const PAIRABLE_RUNTIMES: readonly BridgeRuntime[] = ["claude-code", "codex"];

export const STATE_LABELS: Readonly<Record<BridgeState, string>> = {
  unpaired: "Not paired",
  pairing: "Waiting for approval",
  connecting: "Connecting",
  online: "Online",
  offline: "Offline",
  error: "Error",
};
