import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningServer } from "../src/server";
import { enqueueWebhookEvent } from "../src/webhooks/webhook-outbox";
import { call, ok } from "./delegation-fixture";
import { WebhookReceiver } from "./fakes/webhook-receiver";
import { POSTGRES_URL, REDIS_URL, randomRedisPrefix, startAnotherInstance, startTestServer, type TestServer } from "./harness";

/** Deliveries queued at once for the two instances to race over. */
const BURST = 300;

describe.skipIf(!POSTGRES_URL)("webhooks across instances (PostgreSQL + Redis)", () => {
  let one: TestServer;
  let two: RunningServer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    one = await startTestServer(
      { redisUrl: REDIS_URL, redisPrefix: randomRedisPrefix(), maintenanceIntervalMs: 0, allowPrivateWebhooks: true, webhookPollMs: 20 },
      "postgres",
    );
    two = await startAnotherInstance(one);
  });
  afterAll(async () => {
    await two?.close();
    await one?.stop();
    await receiver?.close();
  });

  it("two instances drain one outbox: every delivery sent once, none lost, none doubled", async () => {
    const alice = await one.addUser("alice");
    const { path, url } = receiver.newPath();
    const created = await ok<{ webhook: { id: string }; secret: string }>(one, alice.apiKey, "POST", "/webhooks", {
      url,
      events: ["message.received"],
    });
    receiver.trust(path, created.secret);
    // One event's transaction queues the whole burst; both instances' workers poll for it at once.
    const { db, clock } = one.server.context;
    await db.transaction().execute(async (tx) => {
      for (let n = 1; n <= BURST; n++) {
        await enqueueWebhookEvent(tx, undefined, clock, alice.userId, "message.received", {
          conversationId: 1,
          messageId: n,
          fromUserId: alice.userId,
          senderType: "human",
          summary: `message ${n}`,
        });
      }
    });
    await receiver.nth(BURST, (w) => w.path === path);
    await vi.waitFor(
      async () => {
        const pending = await db.selectFrom("webhook_deliveries").select("id").where("status", "!=", "succeeded").execute();
        expect(pending).toEqual([]);
      },
      { timeout: 20_000, interval: 50 },
    );
    const ids = receiver.forPath(path).map((w) => w.id);
    expect(ids).toHaveLength(BURST);
    expect(new Set(ids).size).toBe(BURST);
    const attempts = await db.selectFrom("webhook_attempts").select("delivery_id").execute();
    expect(attempts).toHaveLength(BURST);
    expect(receiver.rejected).toEqual([]);
  });

  it("without TANDEM_ALLOW_PRIVATE_WEBHOOKS, loopback, private, link-local and metadata URLs are refused", async () => {
    const strict = await startAnotherInstance(one, { allowPrivateWebhooks: false });
    try {
      const bob = await one.addUser("bob");
      for (const url of [
        receiver.newPath().url,
        "http://localhost:8080/hook",
        "http://10.1.2.3/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://[fd00:ec2::254]/hook",
      ]) {
        const response = await fetch(`${strict.apiUrl}/webhooks`, {
          method: "POST",
          headers: { authorization: `Bearer ${bob.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ url, events: ["grant.revoked"] }),
        });
        const body = (await response.json()) as { error: string; message: string };
        expect([url, response.status, body.error]).toEqual([url, 400, "address_refused"]);
        // The same words as remote tool servers' (one shared check), naming this operator setting.
        expect(body.message).toMatch(
          /a loopback, private, link-local or reserved address; an operator may allow this with TANDEM_ALLOW_PRIVATE_WEBHOOKS=1$/,
        );
      }
      const nowhere = await fetch(`${strict.apiUrl}/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${bob.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ url: "http://nothing.invalid/hook", events: ["grant.revoked"] }),
      });
      expect([nowhere.status, await nowhere.json()]).toEqual([
        400,
        expect.objectContaining({ error: "address_refused", message: "nothing.invalid does not resolve" }),
      ]);
      const first = await call(one, bob.apiKey, "GET", "/webhooks");
      expect(first.body).toMatchObject({ webhooks: [] });
    } finally {
      await strict.close();
    }
  });
});
