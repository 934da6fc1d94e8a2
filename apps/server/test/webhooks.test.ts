import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { pruneWebhookDeliveries } from "../src/webhooks/webhook-prune";
import { agentPair, call, ok, openGrant, storages, userEvents } from "./delegation-fixture";
import { type Answer, WebhookReceiver } from "./fakes/webhook-receiver";
import { startTestServer, type TestServer, type TestUser } from "./harness";

interface Endpoint {
  id: string;
  url: string;
  description: string;
  events: string[];
  status: "enabled" | "disabled";
  disabledReason: string | null;
  failingSince: string | null;
  previousSecretExpiresAt: string | null;
}

interface Attempt {
  attemptedAt: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  nextAttemptAt: string | null;
}

interface Delivery {
  id: string;
  type: string;
  status: "pending" | "succeeded" | "failed";
  attemptCount: number;
  nextAttemptAt: string | null;
  attempts: Attempt[];
}

const ALL_EVENTS = ["message.received", "grant.revoked", "grant.expired", "heartbeat.run.completed"];
const MINUTE = 60_000;

describe.each(storages("webhooks suite"))("webhooks (%s)", (storage) => {
  let ts: TestServer;
  let receiver: WebhookReceiver;
  let serial = 0;
  const user = (name: string) => ts.addUser(`${name}${++serial}`);

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    ts = await startTestServer(
      {
        maintenanceIntervalMs: 0,
        allowPrivateWebhooks: true,
        // Short enough to watch the retries, in order, within a test.
        webhookRetryDelaysMs: [100, 100, 100],
        webhookTimeoutMs: 400,
        webhookPollMs: 25,
      },
      storage,
    );
  });
  afterAll(async () => {
    await ts?.stop();
    await receiver?.close();
  });

  /** An endpoint of `owner` at a fresh receiver path, trusted with its secret, answering `answers` first. */
  async function endpoint(owner: TestUser, events = ALL_EVENTS, ...answers: Answer[]) {
    const { path, url } = receiver.newPath();
    receiver.answer(path, ...answers);
    const created = await call<{ webhook: Endpoint; secret: string }>(ts, owner.apiKey, "POST", "/webhooks", { url, events });
    expect(created.status).toBe(201);
    receiver.trust(path, created.body.secret);
    return { path, url, secret: created.body.secret, webhook: created.body.webhook };
  }

  const deliveries = async (owner: TestUser, id: string) =>
    (await ok<{ deliveries: Delivery[] }>(ts, owner.apiKey, "GET", `/webhooks/${id}/deliveries`)).deliveries;

  /** The delivery once it has settled as `status` (the worker records an attempt right after the receiver answers). */
  const settled = (owner: TestUser, endpointId: string, deliveryId: string, status: Delivery["status"]) =>
    vi.waitFor(
      async () => {
        const found = (await deliveries(owner, endpointId)).find((d) => d.id === deliveryId);
        if (found?.status !== status) throw new Error(`delivery ${deliveryId} is ${found?.status}`);
        return found;
      },
      { timeout: 10_000, interval: 20 },
    );

  it("creates an endpoint with its secret shown once, lists and reads it without the secret, updates and deletes it", async () => {
    const alice = await user("alice");
    const { webhook, secret } = await endpoint(alice, ["message.received"]);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(webhook).toMatchObject({ events: ["message.received"], status: "enabled", description: "", failingSince: null });
    const listed = await ok<{ webhooks: Endpoint[] }>(ts, alice.apiKey, "GET", "/webhooks");
    expect(listed.webhooks.map((w) => w.id)).toEqual([webhook.id]);
    expect(JSON.stringify(listed)).not.toContain(secret.slice(6));
    expect(JSON.stringify(await ok(ts, alice.apiKey, "GET", `/webhooks/${webhook.id}`))).not.toContain(secret.slice(6));
    // Sealed at rest: the database holds no plain secret either.
    const row = await ts.server.context.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("id", "=", webhook.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));

    const patched = await ok<{ webhook: Endpoint }>(ts, alice.apiKey, "PATCH", `/webhooks/${webhook.id}`, {
      description: "ops",
      events: ["grant.revoked", "grant.expired"],
    });
    expect(patched.webhook).toMatchObject({ description: "ops", events: ["grant.revoked", "grant.expired"] });
    await ok(ts, alice.apiKey, "DELETE", `/webhooks/${webhook.id}`);
    expect((await call(ts, alice.apiKey, "GET", `/webhooks/${webhook.id}`)).status).toBe(404);
  });

  it("delivers message.received, grant.revoked, grant.expired, heartbeat.run.completed and the test event, each verified", async () => {
    const { alice, bob, aliceBridge } = await agentPair(ts, { alice: `ann${++serial}`, bob: `ben${serial}` });
    const hook = await endpoint(alice);

    // message.received: bob writes into a group alice is in.
    await ok(ts, bob.apiKey, "POST", "/network/request", { to: alice.username });
    await ok(ts, alice.apiKey, "POST", "/network/request", { to: bob.username });
    const group = await ok<{ group: { id: number } }>(ts, bob.apiKey, "POST", "/groups", { name: "Crew", members: [alice.username] });
    const posted = await ok<{ message: { id: number } }>(ts, bob.apiKey, "POST", `/conversations/${group.group.id}/messages`, {
      content: `hello ${"x".repeat(3000)}`,
    });
    const message = await receiver.next((w) => w.path === hook.path && w.payload.type === "message.received");
    expect(message.payload.data).toMatchObject({
      conversationId: group.group.id,
      messageId: posted.message.id,
      fromUserId: bob.userId,
      senderType: "human",
    });
    // Thin: a summary, not the 3,000 characters.
    expect((message.payload.data.summary as string).length).toBeLessThanOrEqual(280);
    expect(message.payload.timestamp).toEqual(expect.any(String));

    // grant.revoked, to the requester (alice) who subscribed.
    const grant = await openGrant(ts, aliceBridge.deviceToken, bob);
    await ok(ts, alice.apiKey, "POST", `/local-agent/grants/${grant.commSessionId}/revoke`);
    const revoked = await receiver.next((w) => w.path === hook.path && w.payload.type === "grant.revoked");
    expect(revoked.payload.data).toMatchObject({ grantId: grant.commSessionId, requesterId: alice.userId, recipientId: bob.userId });

    // grant.expired, by the maintenance sweep.
    const short = await openGrant(ts, aliceBridge.deviceToken, bob, { requestedTtlMinutes: 2 });
    ts.server.context.clock.advance(2 * MINUTE + 1);
    await ts.server.context.maintenance.runAll();
    const expired = await receiver.next((w) => w.path === hook.path && w.payload.type === "grant.expired");
    expect(expired.payload.data).toMatchObject({ grantId: short.commSessionId });

    // heartbeat.run.completed
    const run = await ok<{ result: { runId: number; status: string } }>(ts, alice.apiKey, "POST", "/heartbeat/run", {});
    const completed = await receiver.next((w) => w.path === hook.path && w.payload.type === "heartbeat.run.completed");
    expect(completed.payload.data).toMatchObject({ runId: run.result.runId, status: run.result.status });

    const test = await call<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    expect(test.status).toBe(201);
    const tested = await receiver.next((w) => w.id === test.body.delivery.id);
    expect(tested.payload.type).toBe("webhook.test");

    // Every body is Standard Webhooks' {type, timestamp, data}, under 20 KB, signed `v1,<base64>`.
    for (const w of receiver.forPath(hook.path)) {
      expect(Object.keys(w.payload).sort()).toEqual(["data", "timestamp", "type"]);
      expect(Buffer.byteLength(w.body)).toBeLessThan(20 * 1024);
      expect(w.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    // bob subscribed to nothing: nothing was queued for him.
    const queued = await ts.server.context.db.selectFrom("webhook_deliveries").select("endpoint_id").execute();
    expect(new Set(queued.map((d) => d.endpoint_id)).has(hook.webhook.id)).toBe(true);
    expect(receiver.rejected).toEqual([]);
  });

  it("message.received: a stranger's held message fires nothing until its request is accepted, then one per message", async () => {
    const [carol, stranger] = [await user("carol"), await user("stranger")];
    const hook = await endpoint(carol, ["message.received"]);
    for (const message of ["Hi Carol", "Lunch?"]) {
      await ok(ts, stranger.apiKey, "POST", "/agent/message", { to: carol.username, message });
    }
    const requests = await ok<{ requests: { id: number; messages: { id: number }[] }[] }>(
      ts,
      carol.apiKey,
      "GET",
      "/conversations/requests",
    );
    const [request] = requests.requests;
    const held = await ts.server.context.db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("endpoint_id", "=", hook.webhook.id)
      .execute();
    expect(held).toEqual([]);
    await ok(ts, carol.apiKey, "POST", `/conversations/requests/${request?.id}/accept`);
    const received = await receiver.nth(2, (w) => w.path === hook.path && w.payload.type === "message.received");
    received.sort((a, b) => Number(a.payload.data.messageId) - Number(b.payload.data.messageId));
    expect(received.map((w) => [w.payload.data.messageId, w.payload.data.fromUserId, w.payload.data.summary])).toEqual([
      [request?.messages[0]?.id, stranger.userId, "Hi Carol"],
      [request?.messages[1]?.id, stranger.userId, "Lunch?"],
    ]);
  });

  it("retries a failing receiver with the same webhook-id until it answers 2xx, and honours Retry-After", async () => {
    const alice = await user("alice");
    const hook = await endpoint(alice, ALL_EVENTS, { status: 500 }, { status: 503, headers: { "retry-after": "1" } });
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    const done = await settled(alice, hook.webhook.id, test.delivery.id, "succeeded");
    expect(done.attempts.map((a) => a.statusCode)).toEqual([500, 503, 200]);
    expect(done.attempts.map((a) => a.error)).toEqual(["HTTP 500", "HTTP 503", null]);
    // After the 503, the next try waited the second Retry-After asked for, not the 100 ms schedule.
    const [, afterRetry] = done.attempts as [Attempt, Attempt, Attempt];
    expect(Date.parse(afterRetry.nextAttemptAt as string) - Date.parse(afterRetry.attemptedAt)).toBeGreaterThanOrEqual(1000);
    const seen = receiver.forPath(hook.path);
    expect(seen.map((w) => w.id)).toEqual([test.delivery.id, test.delivery.id, test.delivery.id]);
    // The body is the same on every try; the timestamp header is the send time.
    expect(new Set(seen.map((w) => w.body)).size).toBe(1);
    const endpointNow = await ok<{ webhook: Endpoint }>(ts, alice.apiKey, "GET", `/webhooks/${hook.webhook.id}`);
    expect(endpointNow.webhook.failingSince).toBeNull();
  });

  it("gives up after the last retry of the schedule", async () => {
    const alice = await user("alice");
    const hook = await endpoint(alice, ALL_EVENTS, ...Array.from({ length: 4 }, () => ({ status: 500 })));
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    const failed = await settled(alice, hook.webhook.id, test.delivery.id, "failed");
    // One try and the three retries of this server's schedule.
    expect(failed.attempts.map((a) => a.statusCode)).toEqual([500, 500, 500, 500]);
    expect(failed.attempts.at(-1)?.nextAttemptAt).toBeNull();
    const still = await ok<{ webhook: Endpoint }>(ts, alice.apiKey, "GET", `/webhooks/${hook.webhook.id}`);
    expect(still.webhook).toMatchObject({ status: "enabled", failingSince: expect.any(String) });
  });

  it("410 disables the endpoint at once and tells its owner on the user stream", async () => {
    const alice = await user("alice");
    const hook = await endpoint(alice, ALL_EVENTS, { status: 410 });
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    const failed = await settled(alice, hook.webhook.id, test.delivery.id, "failed");
    expect(failed.attempts.map((a) => a.statusCode)).toEqual([410]);
    const now = await ok<{ webhook: Endpoint }>(ts, alice.apiKey, "GET", `/webhooks/${hook.webhook.id}`);
    expect(now.webhook).toMatchObject({ status: "disabled", disabledReason: "gone" });
    const events = await userEvents(ts, alice);
    expect(events.find((e) => e.type === "webhook.disabled")?.data).toMatchObject({ webhookId: hook.webhook.id, reason: "gone" });
    // Disabled: no test, no replay, until the owner enables it again.
    expect((await call(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`)).body).toMatchObject({ error: "webhook_disabled" });
    const enabled = await ok<{ webhook: Endpoint }>(ts, alice.apiKey, "PATCH", `/webhooks/${hook.webhook.id}`, { enabled: true });
    expect(enabled.webhook).toMatchObject({ status: "enabled", disabledReason: null, failingSince: null });
  });

  it("an endpoint failing for 5 days is disabled and its owner told", async () => {
    const alice = await user("alice");
    // The first failure asks for an hour's wait, so the next try comes only once the clock has moved.
    const hook = await endpoint(alice, ALL_EVENTS, { status: 500, headers: { "retry-after": "3600" } }, { status: 500 });
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    await vi.waitFor(async () => expect((await deliveries(alice, hook.webhook.id))[0]?.attemptCount).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    ts.server.context.clock.advance(5 * 24 * 60 * MINUTE);
    const failed = await settled(alice, hook.webhook.id, test.delivery.id, "failed");
    expect(failed.attempts.map((a) => a.statusCode)).toEqual([500, 500]);
    const now = await ok<{ webhook: Endpoint }>(ts, alice.apiKey, "GET", `/webhooks/${hook.webhook.id}`);
    expect(now.webhook).toMatchObject({ status: "disabled", disabledReason: "failing" });
    const told = (await userEvents(ts, alice)).filter((e) => e.type === "webhook.disabled");
    expect(told.map((e) => e.data)).toEqual([expect.objectContaining({ webhookId: hook.webhook.id, reason: "failing" })]);
  });

  it("a redirect is a failure (never followed), and a receiver that does not answer times out", async () => {
    const alice = await user("alice");
    const target = receiver.newPath();
    const hook = await endpoint(alice, ALL_EVENTS, { status: 302, headers: { location: target.url } }, "hang");
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    const done = await settled(alice, hook.webhook.id, test.delivery.id, "succeeded");
    expect(done.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [302, `redirect refused (to ${target.url})`],
      [null, "no answer within 400 ms"],
      [200, null],
    ]);
    expect(receiver.forPath(target.path)).toEqual([]);
  });

  it("rotation: the new secret is shown once, and old and new both verify every delivery for 24 hours", async () => {
    const alice = await user("alice");
    const hook = await endpoint(alice);
    const rotated = await ok<{ webhook: Endpoint; secret: string }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/rotate-secret`);
    expect(rotated.secret).not.toBe(hook.secret);
    const overlap = Date.parse(rotated.webhook.previousSecretExpiresAt as string) - ts.server.context.clock.now().getTime();
    expect(overlap).toBeGreaterThan(23 * 60 * MINUTE);
    receiver.trust(hook.path, hook.secret, rotated.secret);
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    const got = await receiver.next((w) => w.id === test.delivery.id);
    expect(got.verifiedWith).toEqual([hook.secret, rotated.secret]);
    expect(got.signature.split(" ")).toHaveLength(2);
    // Past the overlap only the new secret signs: the old one no longer verifies.
    ts.server.context.clock.advance(24 * 60 * MINUTE + 1);
    receiver.trust(hook.path, rotated.secret);
    const later = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    expect((await receiver.next((w) => w.id === later.delivery.id)).signature.split(" ")).toHaveLength(1);
    expect(receiver.rejected).toEqual([]);
  });

  it("replays a finished delivery with the same webhook-id and body; a pending one is 409", async () => {
    const alice = await user("alice");
    const hook = await endpoint(alice, ALL_EVENTS, "hang");
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    await receiver.next((w) => w.id === test.delivery.id);
    const busy = await call(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/deliveries/${test.delivery.id}/replay`);
    expect([busy.status, busy.body.error]).toEqual([409, "delivery_pending"]);
    await settled(alice, hook.webhook.id, test.delivery.id, "succeeded");
    const replayed = await ok<{ delivery: Delivery }>(
      ts,
      alice.apiKey,
      "POST",
      `/webhooks/${hook.webhook.id}/deliveries/${test.delivery.id}/replay`,
    );
    expect(replayed.delivery.id).toBe(test.delivery.id);
    const copies = await receiver.nth(3, (w) => w.id === test.delivery.id);
    expect(new Set(copies.map((w) => w.body)).size).toBe(1);
    const missing = await call(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/deliveries/msg_nope/replay`);
    expect(missing.status).toBe(404);
  });

  it("the maintenance sweep prunes finished deliveries past the retention with their attempts; a replayed one stays", async () => {
    const alice = await user("alice");
    const hook = await endpoint(alice);
    const sent = async () => {
      const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
      return (await settled(alice, hook.webhook.id, test.delivery.id, "succeeded")).id;
    };
    const [old, replayedOld] = [await sent(), await sent()];
    ts.server.context.clock.advance((ts.server.context.config.webhookRetentionDays * 24 * 60 + 1) * MINUTE);
    const recent = await sent();
    // Replayed after the retention: its log starts again, so it is kept.
    await ok(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/deliveries/${replayedOld}/replay`);
    await receiver.nth(2, (w) => w.id === replayedOld);
    await settled(alice, hook.webhook.id, replayedOld, "succeeded");
    // Two instances' sweeps at once delete it once.
    const counts = await Promise.all([pruneWebhookDeliveries(ts.server.context), pruneWebhookDeliveries(ts.server.context)]);
    expect(counts[0] + counts[1]).toBeGreaterThanOrEqual(1);
    expect((await deliveries(alice, hook.webhook.id)).map((d) => d.id).sort()).toEqual([recent, replayedOld].sort());
    const attempts = await ts.server.context.db.selectFrom("webhook_attempts").select("id").where("delivery_id", "=", old).execute();
    expect(attempts).toEqual([]);
    // The maintenance sweep prunes the rest once they are past the retention too.
    ts.server.context.clock.advance((ts.server.context.config.webhookRetentionDays * 24 * 60 + 1) * MINUTE);
    await ts.server.context.maintenance.runAll();
    expect(await deliveries(alice, hook.webhook.id)).toEqual([]);
  });

  it("another owner's endpoint is 404 on every route", async () => {
    const [alice, mallory] = [await user("alice"), await user("mallory")];
    const hook = await endpoint(alice);
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    const id = hook.webhook.id;
    for (const [method, path, body] of [
      ["GET", `/webhooks/${id}`],
      ["PATCH", `/webhooks/${id}`, { description: "mine" }],
      ["DELETE", `/webhooks/${id}`],
      ["POST", `/webhooks/${id}/rotate-secret`],
      ["POST", `/webhooks/${id}/test`],
      ["GET", `/webhooks/${id}/deliveries`],
      ["POST", `/webhooks/${id}/deliveries/${test.delivery.id}/replay`],
    ] as const) {
      const answer = await call(ts, mallory.apiKey, method, path, body);
      expect([method, path, answer.status, answer.body.error]).toEqual([method, path, 404, "not_found"]);
    }
    expect((await ok<{ webhooks: Endpoint[] }>(ts, mallory.apiKey, "GET", "/webhooks")).webhooks).toEqual([]);
    expect((await ok<{ webhook: Endpoint }>(ts, alice.apiKey, "GET", `/webhooks/${id}`)).webhook.description).toBe("");
  });

  it("refuses bad input with a clear 4xx: huge URLs and descriptions, other schemes, unknown or repeated events, no credential", async () => {
    const alice = await user("alice");
    const { url } = receiver.newPath();
    const cases: [unknown, number][] = [
      [{ url: `${url}?${"a".repeat(3000)}`, events: ["message.received"] }, 400],
      [{ url, events: ["message.received"], description: "d".repeat(501) }, 400],
      [{ url, events: ["message.received"], description: "d".repeat(20_000) }, 413],
      [{ url: "ftp://example.com/hook", events: ["message.received"] }, 400],
      [{ url: "not a url", events: ["message.received"] }, 400],
      [{ url, events: [] }, 400],
      [{ url, events: ["message.deleted"] }, 400],
      [{ url, events: ["grant.revoked", "grant.revoked"] }, 400],
      [{ url }, 400],
    ];
    for (const [body, status] of cases) {
      const answer = await call(ts, alice.apiKey, "POST", "/webhooks", body);
      expect([answer.status, answer.body.success]).toEqual([status, false]);
    }
    expect((await call(ts, null, "GET", "/webhooks")).status).toBe(401);
    expect((await ok<{ webhooks: Endpoint[] }>(ts, alice.apiKey, "GET", "/webhooks")).webhooks).toEqual([]);
  });

  it("a restart in the middle of a delivery loses nothing: the next server sends it again with its webhook-id", async () => {
    const alice = await user("alice");
    const hook = await endpoint(alice, ALL_EVENTS, "hang");
    const test = await ok<{ delivery: Delivery }>(ts, alice.apiKey, "POST", `/webhooks/${hook.webhook.id}/test`);
    await receiver.next((w) => w.id === test.delivery.id);
    // Earlier tests moved this server's clock on; the next server's clock is moved as far.
    const ahead = ts.server.context.clock.now().getTime() - Date.now();
    await ts.restart();
    ts.server.context.clock.advance(ahead);
    const done = await settled(alice, hook.webhook.id, test.delivery.id, "succeeded");
    // The interrupted try was handed back, not counted as a failure.
    expect(done.attempts.map((a) => a.statusCode)).toEqual([200]);
    expect(receiver.forPath(hook.path).map((w) => w.id)).toEqual([test.delivery.id, test.delivery.id]);
  });
});
