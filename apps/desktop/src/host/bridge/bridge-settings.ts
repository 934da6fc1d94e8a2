import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { BridgeRuntime } from "../../shared/desktop-api";
import type { LocalStore, SecretStore } from "../host-context";

/** Where the bridge keeps its state: plain settings for ids, the secret store for the token. */
const DEVICE_ID_KEY = "bridge.deviceId";
const PAIRING_KEY = "bridge.pairing";
const CURSOR_KEY_PREFIX = "bridge.cursor:";
const DEVICE_TOKEN_SECRET = "bridge.deviceToken";
const ANSWER_GUESTS_KEY = "bridge.answerGuests";

/** What pairing left behind: the endpoint this app is, for whom, on which server. Never the token. */
export const PairingRecord = z.object({
  endpointId: z.string().min(1),
  /** What runs tasks here; `fake` is registered on the server as `claude-code`. */
  runtime: z.enum(["claude-code", "codex", "fake"]),
  serverUrl: z.string().min(1),
  userId: z.number().int(),
  /** The session registered for grants; reused across restarts so the default route stays valid. */
  sessionHandle: z.string().nullable(),
});
export type PairingRecord = z.infer<typeof PairingRecord>;

export class BridgeSettings {
  constructor(
    private readonly store: LocalStore,
    private readonly secrets: SecretStore,
  ) {}

  /** A stable random id for this installation (the endpoint's deviceId); each pairing gets a new endpoint for it. */
  async deviceId(): Promise<string> {
    const existing = await this.store.getSetting(DEVICE_ID_KEY);
    if (existing) return existing;
    const created = `desktop-${randomUUID()}`;
    await this.store.setSetting(DEVICE_ID_KEY, created);
    return created;
  }

  async pairing(): Promise<PairingRecord | null> {
    const raw = await this.store.getSetting(PAIRING_KEY);
    if (!raw) return null;
    const parsed = PairingRecord.safeParse(safeJson(raw));
    return parsed.success ? parsed.data : null;
  }

  async savePairing(record: PairingRecord, deviceToken?: string): Promise<void> {
    if (deviceToken !== undefined) await this.secrets.set(DEVICE_TOKEN_SECRET, deviceToken);
    await this.store.setSetting(PAIRING_KEY, JSON.stringify(record));
  }

  deviceToken(): Promise<string | null> {
    return this.secrets.get(DEVICE_TOKEN_SECRET);
  }

  /** Forgets the pairing and the token; cursors are kept per endpoint id. */
  async forgetPairing(): Promise<void> {
    await this.store.setSetting(PAIRING_KEY, null);
    await this.secrets.delete(DEVICE_TOKEN_SECRET);
  }

  /** Whether the owner turned on answering guests of locally answered share links from this computer (off by default). */
  async answerGuests(): Promise<boolean> {
    return (await this.store.getSetting(ANSWER_GUESTS_KEY)) === "on";
  }

  saveAnswerGuests(on: boolean): Promise<void> {
    return this.store.setSetting(ANSWER_GUESTS_KEY, on ? "on" : null);
  }

  /** The last realtime cursor handled for an endpoint ("0": from the start). */
  async cursor(endpointId: string): Promise<string> {
    return (await this.store.getSetting(CURSOR_KEY_PREFIX + endpointId)) ?? "0";
  }

  saveCursor(endpointId: string, cursor: string): Promise<void> {
    return this.store.setSetting(CURSOR_KEY_PREFIX + endpointId, cursor);
  }
}

/** What the server is told the endpoint runs. */
export function registeredRuntime(runtime: BridgeRuntime): "claude-code" | "codex" {
  return runtime === "codex" ? "codex" : "claude-code";
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
