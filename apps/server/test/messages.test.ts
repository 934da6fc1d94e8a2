import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentPair,
  agentPair,
  type Bridge,
  call,
  grantAgentAccess,
  ok,
  openGrant,
  pollEvents,
  registerBridge,
  StreamReader,
  storages,
  type WireGrant,
  type WireReceipt,
} from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/** A receipt, or an error body. */
type Receipt = WireReceipt & { error?: string; message?: string };

interface Status {
  delivery: Record<string, unknown> & { status: string; deliveryId: string };
  attempts: { attemptId: string; phase: string; resultCode: string | null; retryable: boolean | null; runtimeAckId: string | null }[];
}

interface Setup extends AgentPair {
  grant: WireGrant;
}

describe.each(storages())("messages, deliveries, acks, replies, credits (%s)", (storage) => {
  let ts: TestServer;
  let counter = 0;

  beforeAll(async () => {
    // An allowance of 0: users have no Credits until an operator sets some (credits.test.ts covers the default).
    ts = await startTestServer({ maintenanceIntervalMs: 0, creditAllowance: 0 }, storage);
  });
  afterAll(() => ts.stop());

  /** alice's bridge holds an active grant to bob's default runtime. */
  async function setup(): Promise<Setup> {
    const n = ++counter;
    const pair = await agentPair(ts, { alice: `ann${n}`, bob: `ben${n}` });
    return { ...pair, grant: await openGrant(ts, pair.aliceBridge.deviceToken, pair.bob) };
  }

  const send = (token: string, body: Record<string, unknown>) => call<Receipt>(ts, token, "POST", "/local-agent/messages", body);
  const text = (s: Setup, clientMessageId: string, words = "hello") =>
    send(s.aliceBridge.deviceToken, {
      communicationSessionId: s.grant.commSessionId,
      clientMessageId,
      kind: "text",
      payload: { text: words },
    });
  const ack = (token: string, messageId: string, body: Record<string, unknown>) =>
    call<{ recorded: string; status: string; deliveryId: string; error?: string }>(
      ts,
      token,
      "POST",
      `/local-agent/messages/${messageId}/ack`,
      body,
    );
  const reply = (token: string, messageId: string, body: Record<string, unknown>) =>
    call<Receipt>(ts, token, "POST", `/local-agent/messages/${messageId}/reply`, body);
  const status = (token: string, messageId: string) => ok<Status>(ts, token, "GET", `/local-agent/messages/${messageId}`);
  const credits = async (user: TestUser) => (await ok<{ balance: number }>(ts, user.apiKey, "GET", "/local-agent/credits")).balance;
  const setCredits = async (user: TestUser, n: number) => {
    const result = await ts.cli(["credits", "set", user.username, String(n)]);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as { userId: number; username: string; balance: number };
  };
  const messageCount = async (grantId: string) =>
    (await ts.server.context.db.selectFrom("messages").select("id").where("grant_id", "=", grantId).execute()).length;

  it("sends on the frozen route: 201 receipt, then a message.dispatch with the full envelope on the recipient's stream", async () => {
    const s = await setup();
    const stream = StreamReader.open(ts, s.bobBridge);
    try {
      const first = await text(s, "m-1", "can you look at the build?");
      expect(first.status).toBe(201);
      expect(first.body).toEqual({
        success: true,
        messageId: expect.stringMatching(/^msg_/),
        deliveryId: expect.stringMatching(/^dlv_/),
        status: "queued",
        duplicate: false,
        queuedAt: expect.any(String),
        communicationSessionId: s.grant.commSessionId,
        commSessionId: s.grant.commSessionId,
        sequence: 1,
        correlationId: null,
      });
      const dispatch = await stream.next("message.dispatch");
      expect(dispatch.endpointId).toBe(s.bobBridge.endpointId);
      expect(dispatch.data).toEqual({
        deliveryId: first.body.deliveryId,
        envelope: {
          id: first.body.messageId,
          clientMessageId: "m-1",
          communicationSessionId: s.grant.commSessionId,
          senderPrincipalId: String(s.alice.userId),
          senderDeviceId: s.aliceBridge.deviceId,
          target: {
            kind: "person_default_runtime",
            principalId: String(s.bob.userId),
            endpointId: s.bobBridge.endpointId,
            sessionHandle: s.bobBridge.sessionHandle,
          },
          kind: "text",
          payload: { text: "can you look at the build?" },
          replyTo: null,
          correlationId: null,
          sequence: 1,
          createdAt: first.body.queuedAt,
          expiresAt: s.grant.grantExpiresAt,
        },
      });

      // The interface's own form: commSessionId and a text body; a user key works too.
      const second = await send(s.alice.apiKey, { commSessionId: s.grant.commSessionId, body: "and the tests", clientMessageId: "m-2" });
      expect(second.status).toBe(201);
      expect(second.body.sequence).toBe(2);
      const next = await stream.next("message.dispatch", Number(dispatch.cursor));
      expect(next.data.envelope).toMatchObject({ kind: "text", payload: { text: "and the tests" }, senderDeviceId: null, sequence: 2 });

      // Without a clientMessageId the server makes one.
      const third = await send(s.alice.apiKey, { commSessionId: s.grant.commSessionId, body: "anonymous" });
      expect(third.status).toBe(201);
    } finally {
      await stream.close();
    }
  });

  it("is idempotent per clientMessageId: the same body again is the same receipt, a different one is a 409", async () => {
    const s = await setup();
    const body = {
      communicationSessionId: s.grant.commSessionId,
      clientMessageId: "same",
      kind: "task_invite",
      payload: { a: 1, b: [1, 2] },
    };
    await setCredits(s.alice, 5);
    const first = await send(s.aliceBridge.deviceToken, body);
    expect(first.status).toBe(201);
    // Same content, keys in another order, and the interface's name for the grant.
    const again = await send(s.aliceBridge.deviceToken, {
      payload: { b: [1, 2], a: 1 },
      kind: "task_invite",
      clientMessageId: "same",
      commSessionId: s.grant.commSessionId,
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
    expect(await credits(s.alice)).toBe(4);
    const conflict = await send(s.aliceBridge.deviceToken, { ...body, payload: { a: 2 } });
    expect([conflict.status, conflict.body.error]).toEqual([409, "client_message_id_conflict"]);
    expect(await messageCount(s.grant.commSessionId)).toBe(1);
    expect((await pollEvents(ts, s.bobBridge)).filter((e) => e.type === "message.dispatch")).toHaveLength(1);
  });

  it("refuses bad messages with clear codes and stores nothing", async () => {
    const s = await setup();
    const grantId = s.grant.commSessionId;
    const kind = await send(s.aliceBridge.deviceToken, {
      communicationSessionId: grantId,
      kind: "shell_command",
      payload: { cmd: "rm -rf /" },
    });
    expect([kind.status, kind.body.error]).toEqual([403, "invalid_message_kind"]);
    const big = await send(s.aliceBridge.deviceToken, {
      communicationSessionId: grantId,
      kind: "text",
      payload: { text: "x".repeat(32 * 1024) },
    });
    expect([big.status, big.body.error]).toEqual([413, "payload_too_large"]);
    const huge = await send(s.aliceBridge.deviceToken, { communicationSessionId: grantId, body: "x".repeat(400 * 1024) });
    expect([huge.status, huge.body.error]).toEqual([413, "payload_too_large"]);
    // Just under the limit is fine.
    const fits = await send(s.aliceBridge.deviceToken, {
      communicationSessionId: grantId,
      kind: "text",
      payload: "y".repeat(32 * 1024 - 2),
    });
    expect(fits.status).toBe(201);

    for (const [body, field] of [
      [{ kind: "text", payload: {} }, "communicationSessionId"],
      [{ communicationSessionId: grantId, kind: "text" }, "payload"],
      [{ communicationSessionId: grantId, payload: {}, body: "both" }, "body"],
      [{ communicationSessionId: grantId, commSessionId: "cs_other", payload: {} }, "commSessionId"],
      [{ communicationSessionId: grantId, payload: {}, clientMessageId: "c".repeat(129) }, "clientMessageId"],
      [{ communicationSessionId: grantId, payload: {}, clientMessageId: "" }, "clientMessageId"],
    ] as const) {
      const bad = await send(s.aliceBridge.deviceToken, body);
      expect(bad.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(bad.body.message).toContain(field);
    }
    const raw = await ts.fetch("/api/v1/local-agent/messages", {
      method: "POST",
      headers: { authorization: `Bearer ${s.alice.apiKey}`, "content-type": "application/json" },
      body: "{nope",
    });
    expect(raw.status).toBe(400);
    expect(await messageCount(grantId)).toBe(1);
  });

  it("only the requester sends: the recipient is told to reply, anyone else finds nothing", async () => {
    const s = await setup();
    const asRecipient = await send(s.bobBridge.deviceToken, { communicationSessionId: s.grant.commSessionId, body: "hi" });
    expect([asRecipient.status, asRecipient.body.error]).toEqual([403, "not_grant_requester"]);
    const stranger = await ts.addUser(`eve${counter}`);
    expect((await send(stranger.apiKey, { communicationSessionId: s.grant.commSessionId, body: "hi" })).status).toBe(404);
    expect((await send(s.alice.apiKey, { communicationSessionId: "cs_nothing", body: "hi" })).status).toBe(404);
    const limited = await ts.addUser(`reader${counter}`, ["os.team:read"]);
    expect((await send(limited.apiKey, { communicationSessionId: s.grant.commSessionId, body: "hi" })).body.error).toBe(
      "insufficient_scope",
    );
  });

  it("needs an active grant and a live frozen endpoint", async () => {
    const s = await setup();
    const pending = await ok<WireGrant>(ts, s.alice.apiKey, "POST", "/local-agent/grants", {
      target: { kind: "person_default_runtime", principalId: String(s.bob.userId) },
    });
    const onPending = await send(s.alice.apiKey, { commSessionId: pending.commSessionId, body: "early" });
    expect([onPending.status, onPending.body.error]).toEqual([409, "communication_session_not_active"]);
    await ok(ts, s.bob.apiKey, "POST", `/local-agent/grants/${pending.commSessionId}/decline`);
    const onDeclined = await send(s.alice.apiKey, { commSessionId: pending.commSessionId, body: "declined" });
    expect([onDeclined.status, onDeclined.body.error]).toEqual([409, "communication_session_declined"]);

    await ok(ts, s.bob.apiKey, "DELETE", `/local-agent/endpoints/${s.bobBridge.endpointId}`);
    const gone = await text(s, "after-revoke");
    expect([gone.status, gone.body.error]).toEqual([409, "endpoint_revoked"]);
  });

  it("a task_invite takes one Credit atomically: none left means 402 and nothing stored or dispatched", async () => {
    const s = await setup();
    const invite = (clientMessageId: string) =>
      send(s.aliceBridge.deviceToken, {
        communicationSessionId: s.grant.commSessionId,
        clientMessageId,
        kind: "task_invite",
        payload: { task: "review" },
      });
    expect(await credits(s.alice)).toBe(0);
    const refused = await invite("no-credit");
    expect([refused.status, refused.body.error]).toEqual([402, "insufficient_credits"]);
    expect(await messageCount(s.grant.commSessionId)).toBe(0);
    expect((await pollEvents(ts, s.bobBridge)).filter((e) => e.type === "message.dispatch")).toEqual([]);
    // Texts need no credit.
    expect((await text(s, "free")).status).toBe(201);

    expect(await setCredits(s.alice, 2)).toEqual({ userId: s.alice.userId, username: s.alice.username, balance: 2 });
    const taken = await invite("with-credit");
    expect(taken.status).toBe(201);
    // The refused invite used no sequence number.
    expect(taken.body.sequence).toBe(2);
    expect(await credits(s.alice)).toBe(1);
    expect(await credits(s.bob)).toBe(0);

    // Two at once with one credit: exactly one goes through.
    const race = await Promise.all([invite("race-1"), invite("race-2")]);
    expect(race.map((r) => r.status).sort()).toEqual([201, 402]);
    expect(await credits(s.alice)).toBe(0);

    const shown = await ts.cli(["credits", "show", s.alice.username]);
    expect(JSON.parse(shown.stdout)).toEqual({
      userId: s.alice.userId,
      username: s.alice.username,
      balance: 0,
      unlimited: false,
      monthlyAllowance: null,
      source: "set",
    });
    const audit = await ts.server.context.db.selectFrom("audit_log").select("action").where("party_a", "=", s.alice.userId).execute();
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(["credits.set", "credits.reserve"]));
  });

  it("gives a reserved credit back when the delivery ends before a runtime ack, not after", async () => {
    const s = await setup();
    await setCredits(s.alice, 3);
    const invite = async (clientMessageId: string) =>
      (
        await send(s.aliceBridge.deviceToken, {
          communicationSessionId: s.grant.commSessionId,
          clientMessageId,
          kind: "task_invite",
          payload: { task: clientMessageId },
        })
      ).body.messageId;
    const failed = await invite("fails");
    const acked = await invite("acked");
    const queued = await invite("queued");
    expect(await credits(s.alice)).toBe(0);
    await ok(ts, s.bobBridge.deviceToken, "POST", `/local-agent/messages/${failed}/ack`, {
      phase: "runtime_failed",
      attemptId: "f1",
      resultCode: "busy",
    });
    expect(await credits(s.alice)).toBe(1);
    await ok(ts, s.bobBridge.deviceToken, "POST", `/local-agent/messages/${acked}/ack`, { phase: "runtime_ack", attemptId: "a1" });
    await ok(ts, s.alice.apiKey, "POST", `/local-agent/grants/${s.grant.commSessionId}/revoke`);
    // The queued invite comes back; the one the runtime took on stays spent.
    expect(await credits(s.alice)).toBe(2);
    expect((await status(s.alice.apiKey, queued)).delivery.status).toBe("revoked");
    expect((await status(s.alice.apiKey, acked)).delivery.status).toBe("revoked");
  });

  it("the CLI refuses a credit amount that is not a non-negative whole number", async () => {
    const s = await setup();
    for (const amount of ["-1", "1.5"]) {
      const result = await ts.cli(["credits", "set", s.alice.username, amount]);
      expect(result.code, amount).toBe(2);
    }
    const unknown = await ts.cli(["credits", "set", "nobody-at-all", "3"]);
    expect(unknown.code).toBe(1);
    expect((await ts.cli(["credits", "set", s.alice.username])).code).toBe(2);
  });

  it("shows delivery state and attempts to the sender and recipient only", async () => {
    const s = await setup();
    const sent = (await text(s, "visible")).body;
    for (const token of [s.alice.apiKey, s.aliceBridge.deviceToken, s.bob.apiKey, s.bobBridge.deviceToken]) {
      const seen = await status(token, sent.messageId);
      expect(seen.delivery).toEqual({
        deliveryId: sent.deliveryId,
        status: "queued",
        queuedAt: sent.queuedAt,
        dispatchedAt: null,
        deviceAckReceivedAt: null,
        runtimePendingAt: null,
        runtimeAckReceivedAt: null,
        terminalAt: null,
        resultCode: null,
        runtimeAckId: null,
      });
      expect(seen.attempts).toEqual([]);
    }
    const stranger = await ts.addUser(`mallory${counter}`);
    expect((await call(ts, stranger.apiKey, "GET", `/local-agent/messages/${sent.messageId}`)).status).toBe(404);
    expect((await call(ts, s.alice.apiKey, "GET", "/local-agent/messages/msg_unknown")).status).toBe(404);
    // Dispatch on the recipient's poll moves it to dispatched.
    await pollEvents(ts, s.bobBridge);
    expect((await status(s.alice.apiKey, sent.messageId)).delivery).toMatchObject({
      status: "dispatched",
      dispatchedAt: expect.any(String),
    });
  });

  it("only the owning device acks; each attempt counts once; states move forward only", async () => {
    const s = await setup();
    const sent = (await text(s, "ack-me")).body;
    const other = await registerBridge(ts, s.bob, `ben${counter}-desktop`);
    const stranger = await ts.addUser(`oscar${counter}`);
    const strangerBridge = await registerBridge(ts, stranger, `oscar${counter}-laptop`);
    const deviceAck = { phase: "device_ack", attemptId: "att-1" };

    expect((await ack(s.aliceBridge.deviceToken, sent.messageId, deviceAck)).status).toBe(404);
    expect((await ack(strangerBridge.deviceToken, sent.messageId, deviceAck)).status).toBe(404);
    const wrongDevice = await ack(other.deviceToken, sent.messageId, deviceAck);
    expect([wrongDevice.status, wrongDevice.body.error]).toEqual([403, "not_owning_device"]);
    expect((await ack(s.bob.apiKey, sent.messageId, deviceAck)).status).toBe(403);
    expect((await ack(s.bobBridge.deviceToken, "msg_unknown", deviceAck)).status).toBe(404);
    const badPhase = await ack(s.bobBridge.deviceToken, sent.messageId, { phase: "done", attemptId: "x" });
    expect(badPhase.status).toBe(400);
    expect((await ack(s.bobBridge.deviceToken, sent.messageId, { phase: "device_ack" })).status).toBe(400);

    const first = await ack(s.bobBridge.deviceToken, sent.messageId, deviceAck);
    expect(first.body).toEqual({ success: true, recorded: "state", status: "device_acked", deliveryId: sent.deliveryId });
    const repeat = await ack(s.bobBridge.deviceToken, sent.messageId, deviceAck);
    expect(repeat.body).toEqual(first.body);

    await ok(ts, s.bobBridge.deviceToken, "POST", `/local-agent/messages/${sent.messageId}/ack`, {
      phase: "runtime_pending",
      attemptId: "att-1",
    });
    const runtimeAck = await ack(s.bobBridge.deviceToken, sent.messageId, {
      phase: "runtime_ack",
      attemptId: "att-1",
      runtimeAckId: "rt-42",
      usage: { model: "claude", inputTokens: 120, outputTokens: 30 },
    });
    expect(runtimeAck.body).toMatchObject({ recorded: "state", status: "runtime_acked" });
    // A device ack re-sent for a replayed message does not move it back.
    const replayed = await ack(s.bobBridge.deviceToken, sent.messageId, { phase: "device_ack", attemptId: "att-2" });
    expect(replayed.body).toMatchObject({ recorded: "state", status: "runtime_acked" });

    const seen = await status(s.alice.apiKey, sent.messageId);
    expect(seen.delivery).toMatchObject({
      status: "runtime_acked",
      dispatchedAt: expect.any(String),
      deviceAckReceivedAt: expect.any(String),
      runtimePendingAt: expect.any(String),
      runtimeAckReceivedAt: expect.any(String),
      runtimeAckId: "rt-42",
      terminalAt: null,
    });
    expect(seen.attempts.map((a) => [a.attemptId, a.phase])).toEqual([
      ["att-1", "device_ack"],
      ["att-1", "runtime_pending"],
      ["att-1", "runtime_ack"],
      ["att-2", "device_ack"],
    ]);
    const usage = await ts.server.context.db
      .selectFrom("delivery_attempts")
      .select("usage")
      .where("phase", "=", "runtime_ack")
      .where("message_id", "=", sent.messageId)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(usage.usage as string)).toEqual({ model: "claude", inputTokens: 120, outputTokens: 30 });
  });

  it("an ack after a terminal state is kept for audit only", async () => {
    const s = await setup();
    const sent = (await text(s, "fail-me")).body;
    const failed = await ack(s.bobBridge.deviceToken, sent.messageId, {
      phase: "runtime_failed",
      attemptId: "a",
      resultCode: "adapter_crash",
      retryable: false,
    });
    expect(failed.body).toMatchObject({ recorded: "state", status: "failed" });
    const late = await ack(s.bobBridge.deviceToken, sent.messageId, { phase: "runtime_ack", attemptId: "b" });
    expect(late.body).toEqual({ success: true, recorded: "audit_only", status: "failed", deliveryId: sent.deliveryId });
    expect((await ack(s.bobBridge.deviceToken, sent.messageId, { phase: "runtime_ack", attemptId: "b" })).body).toEqual(late.body);
    const seen = await status(s.alice.apiKey, sent.messageId);
    expect(seen.delivery).toMatchObject({ status: "failed", resultCode: "adapter_crash", terminalAt: expect.any(String) });
    expect(seen.attempts).toEqual([
      expect.objectContaining({ attemptId: "a", phase: "runtime_failed", resultCode: "adapter_crash", retryable: false }),
      expect.objectContaining({ attemptId: "b", phase: "runtime_ack" }),
    ]);
    const recorded = await ts.server.context.db
      .selectFrom("delivery_attempts")
      .select(["attempt_id", "recorded"])
      .where("message_id", "=", sent.messageId)
      .orderBy("id")
      .execute();
    expect(recorded.map((r) => r.recorded)).toEqual(["state", "audit_only"]);

    // After a revocation, too.
    const other = (await text(s, "revoke-me")).body;
    await ok(ts, s.bob.apiKey, "POST", `/local-agent/grants/${s.grant.commSessionId}/revoke`);
    expect((await ack(s.bobBridge.deviceToken, other.messageId, { phase: "device_ack", attemptId: "c" })).body).toMatchObject({
      recorded: "audit_only",
      status: "revoked",
    });
  });

  it("a reply travels back to the requester's reply route, once", async () => {
    const s = await setup();
    const aliceStream = StreamReader.open(ts, s.aliceBridge);
    try {
      const question = (
        await send(s.aliceBridge.deviceToken, {
          communicationSessionId: s.grant.commSessionId,
          clientMessageId: "q",
          kind: "text",
          payload: { text: "what broke?" },
          correlationId: "thread-7",
        })
      ).body;
      const answered = await reply(s.bobBridge.deviceToken, question.messageId, { body: "the linker", clientMessageId: "r-1" });
      expect(answered.status).toBe(201);
      expect(answered.body).toMatchObject({ success: true, status: "queued", duplicate: false, sequence: 2, correlationId: "thread-7" });
      const dispatch = await aliceStream.next("message.dispatch");
      expect(dispatch.endpointId).toBe(s.aliceBridge.endpointId);
      expect(dispatch.data).toMatchObject({
        deliveryId: answered.body.deliveryId,
        envelope: {
          id: answered.body.messageId,
          communicationSessionId: s.grant.commSessionId,
          senderPrincipalId: String(s.bob.userId),
          senderDeviceId: s.bobBridge.deviceId,
          target: { principalId: String(s.alice.userId), endpointId: s.aliceBridge.endpointId, sessionHandle: s.aliceBridge.sessionHandle },
          kind: "text",
          payload: { text: "the linker" },
          replyTo: question.messageId,
          correlationId: "thread-7",
        },
      });
      expect((await status(s.alice.apiKey, question.messageId)).delivery).toMatchObject({
        status: "replied",
        terminalAt: expect.any(String),
      });

      const again = await reply(s.bobBridge.deviceToken, question.messageId, { body: "the linker", clientMessageId: "r-1" });
      expect(again.status).toBe(200);
      // The same receipt, with the delivery's status as it is now (alice's stream has taken it).
      expect(again.body).toEqual({ ...answered.body, duplicate: true, status: expect.stringMatching(/^(queued|dispatched)$/) });
      const second = await reply(s.bobBridge.deviceToken, question.messageId, { body: "actually, the loader", clientMessageId: "r-2" });
      expect([second.status, second.body.error]).toEqual([409, "already_replied"]);

      // Without a correlationId the conversation is named by the original message.
      const plain = (await text(s, "plain")).body;
      const answer = await reply(s.bobBridge.deviceToken, plain.messageId, { body: "ok" });
      expect(answer.body.correlationId).toBe(plain.messageId);
      // The requester's device may answer a reply in turn; it goes back along the frozen route.
      const back = await reply(s.aliceBridge.deviceToken, answer.body.messageId, { body: "thanks" });
      expect(back.status).toBe(201);
      const bobEvents = await pollEvents(ts, s.bobBridge);
      expect(bobEvents.at(-1)?.data).toMatchObject({
        envelope: { replyTo: answer.body.messageId, target: { endpointId: s.bobBridge.endpointId } },
      });
    } finally {
      await aliceStream.close();
    }
  });

  it("refuses replies from the wrong device, when too large, on a closed grant, or with no reply route", async () => {
    const s = await setup();
    const question = (await text(s, "q")).body;
    const other = await registerBridge(ts, s.bob, `ben${counter}-desktop`);
    const wrongDevice = await reply(other.deviceToken, question.messageId, { body: "me" });
    expect([wrongDevice.status, wrongDevice.body.error]).toEqual([403, "not_owning_device"]);
    expect((await reply(s.aliceBridge.deviceToken, question.messageId, { body: "me" })).status).toBe(404);
    expect((await reply(s.bob.apiKey, question.messageId, { body: "me" })).status).toBe(403);
    expect((await reply(s.bobBridge.deviceToken, question.messageId, {})).status).toBe(400);
    const big = await reply(s.bobBridge.deviceToken, question.messageId, { body: "z".repeat(33 * 1024) });
    expect([big.status, big.body.error]).toEqual([413, "payload_too_large"]);
    await ok(ts, s.alice.apiKey, "POST", `/local-agent/grants/${s.grant.commSessionId}/revoke`);
    const closed = await reply(s.bobBridge.deviceToken, question.messageId, { body: "late" });
    expect([closed.status, closed.body.error]).toEqual([409, "communication_session_revoked"]);

    // A requester with only a user key and no default route can ask, but not be answered by reply.
    const n = ++counter;
    const [keyOnly, helper] = [await ts.addUser(`ann${n}`), await ts.addUser(`ben${n}`)];
    await grantAgentAccess(ts, keyOnly, helper);
    const helperBridge = await registerBridge(ts, helper, `ben${n}-laptop`);
    const keyOnlyGrant = await openGrant(ts, keyOnly.apiKey, helper);
    expect(keyOnlyGrant.requesterReplyEndpointId).toBeNull();
    const asked = (await send(keyOnly.apiKey, { commSessionId: keyOnlyGrant.commSessionId, body: "q" })).body;
    const noRoute = await reply(helperBridge.deviceToken, asked.messageId, { body: "a" });
    expect([noRoute.status, noRoute.body.error]).toEqual([409, "no_reply_route"]);
  });

  describe("injection validation", () => {
    const validate = (bridge: Bridge, body: Record<string, unknown>) =>
      call<{ success: boolean; valid: boolean; reason?: string }>(ts, bridge.deviceToken, "POST", "/local-agent/injections/validate", body);
    const verdict = async (bridge: Bridge, body: Record<string, unknown>) => {
      const response = await validate(bridge, body);
      expect(response.status).toBe(200);
      expect(response.body.success).toBe(true);
      return response.body.valid ? "valid" : response.body.reason;
    };
    const target = (s: Setup, messageId: string, extra: Record<string, unknown> = {}) => ({
      messageId,
      communicationSessionId: s.grant.commSessionId,
      endpointId: s.bobBridge.endpointId,
      sessionHandle: s.bobBridge.sessionHandle,
      ...extra,
    });
    const db = () => ts.server.context.db;

    it("accepts a live delivery to the caller's own frozen session", async () => {
      const s = await setup();
      const sent = (await text(s, "inject")).body;
      expect(await verdict(s.bobBridge, target(s, sent.messageId))).toBe("valid");
      expect(await verdict(s.bobBridge, target(s, sent.messageId, { sessionHandle: undefined }))).toBe("valid");
      const { communicationSessionId, ...rest } = target(s, sent.messageId);
      expect(await verdict(s.bobBridge, { ...rest, commSessionId: communicationSessionId })).toBe("valid");
    });

    it("gives every reason, in order, and never anything but 200", async () => {
      const s = await setup();
      const sent = (await text(s, "inject")).body;
      const other = await setup();
      const elsewhere = (await text(other, "elsewhere")).body;
      const desktop = await registerBridge(ts, s.bob, `ben${counter}-desktop`);

      expect(await verdict(s.bobBridge, target(s, "msg_unknown"))).toBe("wrong_target");
      expect(await verdict(s.bobBridge, target(s, elsewhere.messageId))).toBe("wrong_target");
      expect(await verdict(s.bobBridge, target(s, sent.messageId, { communicationSessionId: other.grant.commSessionId }))).toBe(
        "wrong_target",
      );
      expect(await verdict(s.bobBridge, { messageId: 7, communicationSessionId: ["x"] })).toBe("wrong_target");
      expect(await verdict(s.bobBridge, {})).toBe("wrong_target");
      expect(await verdict(s.bobBridge, target(s, sent.messageId, { endpointId: desktop.endpointId }))).toBe("endpoint_not_owned");
      expect(await verdict(desktop, target(s, sent.messageId, { endpointId: desktop.endpointId }))).toBe("endpoint_not_owned");
      expect(await verdict(desktop, target(s, sent.messageId))).toBe("endpoint_not_owned");
      expect(await verdict(s.bobBridge, target(s, sent.messageId, { sessionHandle: desktop.sessionHandle }))).toBe("wrong_target");

      const patch = (body: unknown) => ok(ts, s.bobBridge.deviceToken, "PATCH", `/local-agent/sessions/${s.bobBridge.sessionHandle}`, body);
      await patch({ allowInbound: false });
      expect(await verdict(s.bobBridge, target(s, sent.messageId))).toBe("inbound_disabled");
      await patch({ state: "closed" });
      expect(await verdict(s.bobBridge, target(s, sent.messageId))).toBe("session_closed");
      await db().deleteFrom("runtime_sessions").where("handle", "=", s.bobBridge.sessionHandle).execute();
      expect(await verdict(s.bobBridge, target(s, sent.messageId))).toBe("session_not_found");

      await db().updateTable("messages").set({ expires_at: "2000-01-01T00:00:00.000Z" }).where("id", "=", sent.messageId).execute();
      expect(await verdict(s.bobBridge, target(s, sent.messageId))).toBe("message_expired");
      await ok(ts, s.bobBridge.deviceToken, "POST", `/local-agent/messages/${sent.messageId}/ack`, {
        phase: "runtime_failed",
        attemptId: "x",
      });
      expect(await verdict(s.bobBridge, target(s, sent.messageId))).toBe("delivery_terminal");

      // Grant states (a grant that carried a message was active once; set the others directly).
      const grantId = s.grant.commSessionId;
      for (const state of ["pending", "declined"] as const) {
        await db().updateTable("grants").set({ status: state }).where("id", "=", grantId).execute();
        expect(await verdict(s.bobBridge, target(s, sent.messageId))).toBe(
          state === "pending" ? "communication_session_not_active" : "communication_session_declined",
        );
      }
      await db().updateTable("grants").set({ status: "active" }).where("id", "=", grantId).execute();
      await ok(ts, s.alice.apiKey, "POST", `/local-agent/grants/${grantId}/revoke`);
      expect(await verdict(s.bobBridge, target(s, sent.messageId))).toBe("communication_session_revoked");
      // The endpoint check comes before the grant's state.
      expect(await verdict(desktop, target(s, sent.messageId))).toBe("endpoint_not_owned");
    });

    it("rejects an expired grant (lazily, without the sweep) and a replied delivery", async () => {
      const s = await setup();
      const answered = (await text(s, "answer-me")).body;
      await reply(s.bobBridge.deviceToken, answered.messageId, { body: "done" });
      expect(await verdict(s.bobBridge, target(s, answered.messageId))).toBe("delivery_terminal");
      const open = (await text(s, "open")).body;
      expect(await verdict(s.bobBridge, target(s, open.messageId))).toBe("valid");
      ts.server.context.clock.advance(30 * 60_000);
      expect(await verdict(s.bobBridge, target(s, open.messageId))).toBe("communication_session_expired");
      expect((await status(s.alice.apiKey, open.messageId)).delivery.status).toBe("expired");
      // A user key cannot validate at all: only bridges inject.
      expect((await call(ts, s.bob.apiKey, "POST", "/local-agent/injections/validate", target(s, open.messageId))).status).toBe(403);
    });
  });
});
