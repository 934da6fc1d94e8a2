import { chmod, copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { TestServer, TestUser } from "@tandem/server/testing";
import type { ApprovalItem, BridgeRuntime, DesktopApi } from "../src/shared/desktop-api";
import { tempDir, waitFor } from "./host-harness";

/**
 * The other side of the bridge's tests, spoken over the real wire (runtime-wire.md) with raw
 * fetch, the way another person's bridge or script talks to the server.
 */

export async function wire<T = Record<string, unknown>>(
  ts: TestServer,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await ts.fetch(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (response.status < 200 || response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return (text === "" ? null : JSON.parse(text)) as T;
}

/** `requester` asks `target` for agent access and `target` accepts: what grants from requester to target need. */
export async function grantAgentAccess(ts: TestServer, requester: TestUser, target: TestUser): Promise<void> {
  await wire(ts, requester.apiKey, "POST", "/network/request", { to: `${target.username}_coo` });
  const { incoming } = await wire<{ incoming: { requestId: number; type: string; from: { username: string } }[] }>(
    ts,
    target.apiKey,
    "GET",
    "/network/requests",
  );
  const request = incoming.find((r) => r.type === "agent" && r.from.username === requester.username);
  if (!request) throw new Error("no agent-access request arrived");
  await wire(ts, target.apiKey, "POST", "/network/accept", {
    requestId: request.requestId,
    type: "agent",
    action: "accept",
    permissions: { notesAccess: { scope: "all", access: "read" } },
  });
}

export interface PeerBridge {
  endpointId: string;
  deviceToken: string;
  sessionHandle: string;
}

/** A plain bridge for `user` (registered with their key), so replies to them have a route. */
export async function registerPeerBridge(ts: TestServer, user: TestUser, deviceId: string): Promise<PeerBridge> {
  const registered = await wire<{ endpoint: { endpointId: string }; deviceToken: string }>(
    ts,
    user.apiKey,
    "POST",
    "/local-agent/endpoints",
    {
      runtime: "claude-code",
      deviceId,
      capabilities: ["task_invite", "text"],
    },
  );
  const { deviceToken } = registered;
  const { endpointId } = registered.endpoint;
  const session = await wire<{ sessionHandle: string }>(ts, deviceToken, "POST", "/local-agent/sessions", {
    endpointId,
    state: "idle",
    deliveryMode: "managed_stream",
    allowInbound: true,
  });
  await wire(ts, deviceToken, "PUT", "/local-agent/default-route", { endpointId, sessionHandle: session.sessionHandle });
  return { endpointId, deviceToken, sessionHandle: session.sessionHandle };
}

export interface WireEvent {
  cursor: string;
  type: string;
  data: Record<string, unknown>;
}

/** A peer bridge's events after `cursor`, by poll. */
export async function pollEvents(ts: TestServer, peer: PeerBridge, cursor = "0"): Promise<WireEvent[]> {
  const query = new URLSearchParams({ endpointId: peer.endpointId, cursor });
  return (await wire<{ events: WireEvent[] }>(ts, peer.deviceToken, "GET", `/local-realtime/poll?${query}`)).events;
}

export interface MessageState {
  delivery: { status: string; resultCode: string | null };
  attempts: { attemptId: string; phase: string; resultCode: string | null }[];
}

export function messageState(ts: TestServer, user: TestUser, messageId: string): Promise<MessageState> {
  return wire<MessageState>(ts, user.apiKey, "GET", `/local-agent/messages/${messageId}`);
}

/**
 * Installs one of the fake CLIs (test/bridge-fake-*.mjs) as an executable `name` in a new temp
 * directory, as the real one would be on PATH; the script logs next to itself there.
 */
export async function installFakeCli(name: string, script: string): Promise<{ dir: string; command: string; workDir: string }> {
  const dir = await tempDir(`tandem-fake-${name}-`);
  const copy = path.join(dir, path.basename(script));
  await copyFile(script, copy);
  const command = path.join(dir, name);
  await writeFile(command, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(copy)} "$@"\n`);
  await chmod(command, 0o755);
  const workDir = path.join(dir, "work");
  await mkdir(workDir);
  return { dir, command, workDir };
}

/** `peer`'s bridge asks for a grant on `owner`'s default runtime; answers the grant id (pending). */
export async function requestGrant(ts: TestServer, peer: PeerBridge, owner: TestUser): Promise<string> {
  const requested = await wire<{ communicationSessionId: string }>(ts, peer.deviceToken, "POST", "/local-agent/grants", {
    target: { kind: "person_default_runtime", principalId: String(owner.userId) },
  });
  return requested.communicationSessionId;
}

/** `peer` sends a task invite on a grant (one credit). */
export function sendTask(
  ts: TestServer,
  peer: PeerBridge,
  grantId: string,
  clientMessageId: string,
  task: string,
): Promise<{ messageId: string }> {
  return wire(ts, peer.deviceToken, "POST", "/local-agent/messages", {
    communicationSessionId: grantId,
    clientMessageId,
    kind: "task_invite",
    payload: { task },
  });
}

/** Waits until `messageId` is replied, as its sender sees it. */
export function waitReplied(ts: TestServer, sender: TestUser, messageId: string): Promise<MessageState> {
  return waitFor(`message ${messageId} replied`, async () => {
    const state = await messageState(ts, sender, messageId);
    return state.delivery.status === "replied" ? state : undefined;
  });
}

/** The reply a peer bridge received to `messageId`: the text the owner's runtime answered. */
export async function replyText(ts: TestServer, peer: PeerBridge, messageId: string): Promise<unknown> {
  const reply = (await pollEvents(ts, peer)).find(
    (e) => e.type === "message.dispatch" && (e.data.envelope as { replyTo?: string }).replyTo === messageId,
  );
  return (reply?.data.envelope as { payload?: { text?: unknown } } | undefined)?.payload?.text;
}

/** Pairs the host's bridge by device code, approving as `owner` (as the page at approvalUrl does); answers the endpoint id. */
export async function pairBridge(ts: TestServer, api: DesktopApi, owner: TestUser, runtime: BridgeRuntime): Promise<string> {
  const prompt = await api.startBridgePairing({ runtime });
  await wire(ts, owner.apiKey, "POST", "/local-agent/device-code/approve", { userCode: prompt.userCode, action: "approve" });
  const status = await waitFor("the bridge online", async () => {
    const current = await api.getBridgeStatus();
    return current.state === "online" ? current : undefined;
  });
  return status.endpointId as string;
}

/** Waits for the owner's next pending approval of `toolName` and answers it through the host's API (as the Approvals view does). */
export async function ownerDecides(api: DesktopApi, toolName: string, decision: "allow" | "deny"): Promise<ApprovalItem> {
  const approval = await waitFor(`a pending approval for ${toolName}`, async () =>
    (await api.listApprovals()).find((a) => a.toolName === toolName),
  );
  await api.resolveApproval({ approvalId: approval.approvalId, decision });
  return approval;
}
