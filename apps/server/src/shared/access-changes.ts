import type { RealtimeLog } from "../delegation/realtime/event-log";
import type { Logger } from "../logger";
import type { ConnectionGuard } from "../sync/connection-guard";
import type { SharedState } from "./shared-state";

/**
 * "Access was taken away": sent after the change is committed (a revoked key or device token, a
 * share removed or lowered), so every other instance acts on it at once rather than at its next
 * look at the database (the access epoch poll, about a second; a stream's idle tick, seconds).
 * The database stays the truth: a lost signal (Redis down) only makes the others slower to notice.
 */
export interface AccessChange {
  /** Stream channels (a device's endpoint id, a user's stream channel) whose open streams must end. */
  readonly endStreams?: readonly string[];
  /** Whether open sync connections must be checked again (default yes; a device token never opens one). */
  readonly sync?: boolean;
}

const CHANNEL = "access";

/** Tells every other instance (the sender does its own part itself, before answering). */
export function announceAccessChange(shared: SharedState, change: AccessChange = {}): void {
  shared.publish(CHANNEL, { origin: shared.instanceId, endStreams: change.endStreams ?? [], sync: change.sync ?? true });
}

/**
 * Acts on other instances' announcements: open sync connections are checked again (those that
 * lost their document close), and the named streams end, so their reconnect meets the credential
 * check. Answers the unsubscribe function.
 */
export function followAccessChanges(
  shared: SharedState,
  targets: { connections: ConnectionGuard; realtime: RealtimeLog; logger: Logger },
): () => void {
  return shared.subscribe(CHANNEL, (message) => {
    const { origin, endStreams, sync } = (message ?? {}) as { origin?: unknown; endStreams?: unknown; sync?: unknown };
    if (origin === shared.instanceId) return;
    if (Array.isArray(endStreams)) {
      for (const channel of endStreams) if (typeof channel === "string") targets.realtime.endStreams(channel);
    }
    if (sync === false) return;
    targets.connections.recheck().catch((error) => targets.logger.warn({ err: error }, "could not re-check sync access"));
  });
}
