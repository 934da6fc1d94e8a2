import { POSTGRES_URL, type StorageKind, type TestServer, type TestUser } from "./harness";

/**
 * Helpers for delegation tests. They speak the wire of ../shared/spec/runtime-wire.md over real
 * HTTP with raw fetch (not the typed client), because that is exactly what bridges send.
 */

/**
 * The storages a suite runs on: SQLite, and PostgreSQL too when TANDEM_TEST_DATABASE_URL is set.
 * With `suite`, a run without PostgreSQL says so on the console.
 */
export function storages(suite?: string): StorageKind[] {
  if (POSTGRES_URL) return ["sqlite", "postgres"];
  if (suite !== undefined) console.warn(`${suite}: SQLite only; set TANDEM_TEST_DATABASE_URL to run it on PostgreSQL too.`);
  return ["sqlite"];
}

/**
 * The storage of a suite whose behaviour does not depend on the database (HTTP, a protocol, the agent over
 * plain queries, no requests racing on rows): SQLite, also when PostgreSQL is set. What runs on both and
 * why: docs/development.md, "Tests and CI time".
 */
export const SQLITE_ONLY: readonly StorageKind[] = ["sqlite"];

export interface WireResponse<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** One request under `/api/v1`, as a bridge or script sends it. `token` null sends no credential. */
export async function call<T = Record<string, unknown>>(
  ts: TestServer,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<WireResponse<T>> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await ts.fetch(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = { raw: text };
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** Like {@link call} but fails the test unless the status is one of `expected`. */
export async function ok<T = Record<string, unknown>>(
  ts: TestServer,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
  expected: readonly number[] = [200, 201],
): Promise<T> {
  const response = await call<T>(ts, token, method, path, body);
  if (!expected.includes(response.status)) {
    throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

/**
 * The handshake: `requester` asks `target` for agent access (`<target>_coo`) and `target` accepts,
 * which creates the agent permission from target to requester that grants need.
 */
export async function grantAgentAccess(ts: TestServer, requester: TestUser, target: TestUser, permissions: Record<string, unknown> = {}) {
  await ok(ts, requester.apiKey, "POST", "/network/request", { to: `${target.username}_coo` });
  const requests = await ok<{ incoming: { requestId: number | string; type: string; from: { username: string } }[] }>(
    ts,
    target.apiKey,
    "GET",
    "/network/requests",
  );
  const request = requests.incoming.find((r) => r.type === "agent" && r.from.username === requester.username);
  if (!request) throw new Error(`no agent request from ${requester.username} to ${target.username}`);
  await ok(ts, target.apiKey, "POST", "/network/accept", {
    requestId: request.requestId,
    type: "agent",
    action: "accept",
    permissions: { notesAccess: { scope: "all", access: "read" }, ...permissions },
  });
}

export interface Bridge {
  user: TestUser;
  deviceId: string;
  endpointId: string;
  deviceToken: string;
  sessionHandle: string;
}

/** Registers an endpoint with the user's key, then (as the bridge) a session and the default route. */
export async function registerBridge(ts: TestServer, user: TestUser, deviceId: string, runtime = "claude-code"): Promise<Bridge> {
  const registered = await ok<{ endpoint: { endpointId: string }; deviceToken: string }>(
    ts,
    user.apiKey,
    "POST",
    "/local-agent/endpoints",
    {
      runtime,
      deviceId,
      bridgeVersion: "1.0.0",
      adapterVersion: "1.0.0",
      capabilities: ["task_invite", "text"],
    },
  );
  const { deviceToken } = registered;
  const { endpointId } = registered.endpoint;
  const session = await ok<{ sessionHandle: string }>(ts, deviceToken, "POST", "/local-agent/sessions", {
    endpointId,
    label: `${deviceId} session`,
    state: "idle",
    deliveryMode: "managed_stream",
    capabilities: ["task_invite", "text"],
    allowInbound: true,
    allowMidTurnSteer: false,
  });
  await ok(ts, deviceToken, "PUT", "/local-agent/default-route", { endpointId, sessionHandle: session.sessionHandle });
  return { user, deviceId, endpointId, deviceToken, sessionHandle: session.sessionHandle };
}

/** The bridge's heartbeat: its endpoint is online (again) from now, as routing needs after a test moves the clock. */
export async function heartbeat(ts: TestServer, bridge: Pick<Bridge, "deviceToken" | "endpointId">): Promise<void> {
  await ok(ts, bridge.deviceToken, "POST", `/local-agent/endpoints/${bridge.endpointId}/heartbeat`, {});
}

/** Two people on the delegation track: bob has given alice's agent access, and each has a bridge. */
export interface AgentPair {
  alice: TestUser;
  bob: TestUser;
  aliceBridge: Bridge;
  bobBridge: Bridge;
}

/**
 * Adds two users (named `alice` and `bob` unless told otherwise), runs the agent-access handshake
 * from the first to the second, and registers a bridge for each (`<username>-laptop`).
 */
export async function agentPair(
  ts: TestServer,
  names: { alice: string; bob: string } = { alice: "alice", bob: "bob" },
  options: { bobRuntime?: string } = {},
): Promise<AgentPair> {
  const alice = await ts.addUser(names.alice);
  const bob = await ts.addUser(names.bob);
  await grantAgentAccess(ts, alice, bob);
  const aliceBridge = await registerBridge(ts, alice, `${names.alice}-laptop`);
  const bobBridge = await registerBridge(ts, bob, `${names.bob}-laptop`, options.bobRuntime);
  return { alice, bob, aliceBridge, bobBridge };
}

/** The `data:` JSON of a realtime frame. */
export interface StreamEvent {
  cursor: string;
  type: string;
  endpointId: string;
  createdAt: string;
  data: Record<string, unknown>;
}

/**
 * A realtime SSE reader, as a bridge holds one: it parses frames, records every event and the
 * `id:` of each, and notices when the server ends the stream.
 */
export class StreamReader {
  readonly events: StreamEvent[] = [];
  readonly ids: string[] = [];
  pings = 0;
  status = 0;
  ended = false;
  readonly #controller = new AbortController();
  readonly #waiters = new Set<() => void>();
  readonly done: Promise<void>;

  private constructor(request: (signal: AbortSignal) => Promise<Response>) {
    this.done = this.#run(request(this.#controller.signal));
  }

  /** Opens `GET /local-realtime/stream`; `lastEventId` is sent as the `Last-Event-ID` header. */
  static open(ts: TestServer, bridge: Pick<Bridge, "deviceToken" | "endpointId">, options: { cursor?: string; lastEventId?: string } = {}) {
    const query = new URLSearchParams({ endpointId: bridge.endpointId });
    if (options.cursor !== undefined) query.set("cursor", options.cursor);
    const headers: Record<string, string> = { authorization: `Bearer ${bridge.deviceToken}`, accept: "text/event-stream" };
    if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
    return new StreamReader((signal) => ts.fetch(`/api/v1/local-realtime/stream?${query}`, { headers, signal }));
  }

  /** Opens a person's `GET /agent/stream` with their key (the same frames, without `endpointId`). */
  static openAgentStream(ts: TestServer, user: Pick<TestUser, "apiKey">, cursor = "0") {
    const headers = { authorization: `Bearer ${user.apiKey}`, accept: "text/event-stream" };
    return new StreamReader((signal) => ts.fetch(`/api/v1/agent/stream?cursor=${cursor}`, { headers, signal }));
  }

  get lastCursor(): string | undefined {
    return this.events.at(-1)?.cursor;
  }

  async #run(responsePromise: Promise<Response>): Promise<void> {
    try {
      const response = await responsePromise;
      this.status = response.status;
      if (!response.body) return;
      const decoder = new TextDecoder();
      let buffer = "";
      const reader = response.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let boundary = buffer.indexOf("\n\n");
        while (boundary >= 0) {
          this.#frame(buffer.slice(0, boundary));
          buffer = buffer.slice(boundary + 2);
          boundary = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // Aborted by close(), or the connection dropped: either way the stream is over.
    } finally {
      this.ended = true;
      this.#wake();
    }
  }

  #frame(frame: string): void {
    for (const line of frame.split("\n")) {
      if (line.startsWith(": ping")) this.pings++;
      else if (line.startsWith("id: ")) this.ids.push(line.slice(4));
      else if (line.startsWith("data: ")) this.events.push(JSON.parse(line.slice(6)) as StreamEvent);
    }
    this.#wake();
  }

  #wake(): void {
    for (const waiter of this.#waiters) waiter();
  }

  /** Resolves when `predicate` holds (checked on every frame), or rejects after `timeoutMs`. */
  async until(predicate: (reader: StreamReader) => boolean, timeoutMs = 5_000): Promise<void> {
    if (predicate(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`stream condition not met in ${timeoutMs} ms; events: ${this.events.map((e) => e.type).join(", ")}`));
      }, timeoutMs);
      const check = () => {
        if (predicate(this)) {
          clearTimeout(timer);
          this.#waiters.delete(check);
          resolve();
        }
      };
      this.#waiters.add(check);
    });
  }

  /** Waits for the first event of `type` (after `afterCursor`, if given) and returns it. */
  async next(type: string, afterCursor = 0, timeoutMs = 5_000): Promise<StreamEvent> {
    const find = () => this.events.find((e) => e.type === type && Number(e.cursor) > afterCursor);
    await this.until(() => find() !== undefined, timeoutMs);
    return find() as StreamEvent;
  }

  close(): Promise<void> {
    this.#controller.abort();
    return this.done;
  }
}

/** Replays a bridge's stream from the start until an event matching `match` arrives, and returns it. */
export async function replayUntil(
  ts: TestServer,
  bridge: Pick<Bridge, "deviceToken" | "endpointId">,
  match: (event: StreamEvent) => boolean,
  timeoutMs = 10_000,
): Promise<StreamEvent> {
  const stream = StreamReader.open(ts, bridge);
  try {
    await stream.until((s) => s.events.some(match), timeoutMs);
    return stream.events.find(match) as StreamEvent;
  } finally {
    await stream.close();
  }
}

/** A grant row as `GET /local-agent/grants` answers it (the fields grant tests look at). */
export interface WireGrant {
  commSessionId: string;
  communicationSessionId: string;
  requesterPrincipalId: string;
  recipientPrincipalId: string;
  requesterReplyEndpointId: string | null;
  requesterReplySessionHandle: string | null;
  frozenEndpointId: string | null;
  frozenSessionHandle: string | null;
  status: string;
  requestedAt: string;
  requestExpiresAt: string;
  activatedAt: string | null;
  grantExpiresAt: string | null;
  revokedAt: string | null;
}

/** A message receipt as a send or a reply answers it. */
export interface WireReceipt {
  success: boolean;
  messageId: string;
  deliveryId: string;
  status: string;
  duplicate: boolean;
  queuedAt: string;
  communicationSessionId: string;
  commSessionId: string;
  sequence: number;
  correlationId: string | null;
}

/** `requesterToken` (a user key or a device token) asks `recipient` for a grant (pending); the recipient accepts. */
export async function openGrant(
  ts: TestServer,
  requesterToken: string,
  recipient: TestUser,
  body: Record<string, unknown> = {},
): Promise<WireGrant> {
  const requested = await ok<WireGrant>(ts, requesterToken, "POST", "/local-agent/grants", {
    target: { kind: "person_default_runtime", principalId: String(recipient.userId) },
    ...body,
  });
  if (requested.status !== "pending") throw new Error(`grant request answered ${requested.status}, not pending`);
  return ok<WireGrant>(ts, recipient.apiKey, "POST", `/local-agent/grants/${requested.commSessionId}/accept`);
}

/** The events of a bridge's log after `cursor`, read with `GET /local-realtime/poll`. */
export async function pollEvents(ts: TestServer, bridge: Pick<Bridge, "deviceToken" | "endpointId">, cursor = "0"): Promise<StreamEvent[]> {
  const query = new URLSearchParams({ endpointId: bridge.endpointId, cursor });
  const answer = await ok<{ events: StreamEvent[] }>(ts, bridge.deviceToken, "GET", `/local-realtime/poll?${query}`);
  return answer.events;
}

/**
 * The events of a person's own stream after `cursor`, read with `GET /agent/events`: what the
 * owner's apps hear and bridges do not (a collaboration or a tool call waiting for them).
 */
export async function userEvents(ts: TestServer, user: Pick<TestUser, "apiKey">, cursor = "0"): Promise<Omit<StreamEvent, "endpointId">[]> {
  return (await ok<{ events: Omit<StreamEvent, "endpointId">[] }>(ts, user.apiKey, "GET", `/agent/events?cursor=${cursor}`)).events;
}

/**
 * Writes a grant straight to storage, for tests of other areas that need one in a given state: a
 * 10-minute request, and when active a 30-minute grant frozen on `route`.
 */
export async function insertGrant(
  ts: TestServer,
  grant: {
    id: string;
    requesterId: number;
    recipientId: number;
    status: "pending" | "active" | "declined";
    route?: { endpointId: string; sessionHandle: string };
  },
): Promise<void> {
  const { db, clock } = ts.server.context;
  const now = clock.iso();
  const active = grant.status === "active";
  await db
    .insertInto("grants")
    .values({
      id: grant.id,
      requester_id: grant.requesterId,
      requester_device_id: null,
      requester_reply_endpoint_id: null,
      requester_reply_session_handle: null,
      recipient_id: grant.recipientId,
      target_kind: "person_default_runtime",
      target_offer_id: null,
      frozen_endpoint_id: active ? (grant.route?.endpointId ?? null) : null,
      frozen_session_handle: active ? (grant.route?.sessionHandle ?? null) : null,
      status: grant.status,
      requested_ttl_minutes: 30,
      requested_at: now,
      request_expires_at: clock.isoIn(10 * 60_000),
      activated_at: active ? now : null,
      grant_expires_at: active ? clock.isoIn(30 * 60_000) : null,
      revoked_at: null,
      ended_at: grant.status === "declined" ? now : null,
    })
    .execute();
}

/** Writes a queued text message and its delivery straight to storage, living as long as a 30-minute grant. */
export async function insertQueuedMessage(
  ts: TestServer,
  message: {
    id: string;
    deliveryId: string;
    grantId: string;
    senderId: number;
    recipientId: number;
    route: { endpointId: string; sessionHandle: string };
    clientMessageId: string;
  },
): Promise<void> {
  const { db, clock } = ts.server.context;
  const now = clock.iso();
  await db
    .insertInto("messages")
    .values({
      id: message.id,
      delivery_id: message.deliveryId,
      grant_id: message.grantId,
      sender_id: message.senderId,
      sender_device_id: null,
      recipient_id: message.recipientId,
      target_endpoint_id: message.route.endpointId,
      target_session_handle: message.route.sessionHandle,
      client_message_id: message.clientMessageId,
      request_hash: "h",
      kind: "text",
      payload: "{}",
      reply_to: null,
      correlation_id: null,
      sequence: 1,
      created_at: now,
      expires_at: clock.isoIn(30 * 60_000),
      status: "queued",
      queued_at: now,
    })
    .execute();
}
