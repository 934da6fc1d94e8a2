import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The server's receiver: a real HTTP server that verifies every delivery with the official
// `standardwebhooks` library, as a customer's would, and answers as a test tells it.
import { SIGN_IN_SCOPES } from "../../server/src/delegation/runtime/pairing-service";
import { WebhookReceiver } from "../../server/test/fakes/webhook-receiver";
import { CONNECTIONS_OFFLINE } from "../src/host/connections/connections-call";
import {
  createWebhookMethods,
  deliveryItem,
  readWebhookList,
  readWebhookWithSecret,
  WEBHOOK_GONE,
  WEBHOOKS_NOT_ALLOWED,
  WEBHOOKS_UNSUPPORTED,
} from "../src/host/connections/webhooks";
import type { SessionService } from "../src/host/host-context";
import { serverClient } from "../src/host/session/server-client";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, freePort, screenshot, signInOnPage } from "./browser-harness";

/**
 * The Webhooks panel of Connections end to end, in Chromium (web mode): the real server (loopback
 * receivers allowed, as with TANDEM_ALLOW_PRIVATE_WEBHOOKS=1; retries shortened), the real host, and
 * a receiver verifying with `standardwebhooks`. Add with the secret shown once, test, the delivery
 * log with status codes, replay, rotate, off and on, remove, offline, and an endpoint gone elsewhere.
 */
const PATIENCE = { timeout: 60_000, intervals: [100, 250, 500, 1000] };
const HOSTILE = `<img src=x onerror="window.__hookPwned=1">`;

const ENDPOINT = {
  id: "whe_1",
  url: "https://example.com/hook",
  description: "",
  events: ["message.received"],
  status: "disabled",
  disabledReason: "gone",
  failingSince: null,
  previousSecretExpiresAt: null,
  createdAt: "2026-12-01T00:00:00.000Z",
  updatedAt: "2026-12-01T00:00:00.000Z",
};

describe("webhook answers, as the host reads them", () => {
  it("says why an endpoint is off in words, cuts a long error, and refuses a secret that is not whsec_", () => {
    expect(readWebhookList({ success: true, webhooks: [ENDPOINT] })[0]).toMatchObject({
      enabled: false,
      disabledReason: "Turned off because the receiver answered 410 Gone (it asked for no more deliveries).",
    });
    expect(readWebhookList({ webhooks: [{ ...ENDPOINT, disabledReason: "failing" }] })[0]?.disabledReason).toBe(
      "Turned off because no delivery has succeeded for 5 days.",
    );
    expect(readWebhookList({ webhooks: [{ ...ENDPOINT, status: "enabled" }] })[0]).toMatchObject({ enabled: true, disabledReason: null });
    expect(() => readWebhookWithSecret({ webhook: ENDPOINT, secret: "plain" })).toThrow(
      "The server's answer about the webhook was not understood; this app may need an update.",
    );
    const failed = deliveryItem({
      id: "msg_1",
      type: "webhook.test",
      status: "failed",
      attemptCount: 1,
      nextAttemptAt: "2026-12-01T00:00:00.000Z",
      lastStatusCode: null,
      lastError: `  no answer\n${"x".repeat(400)}`,
      createdAt: "2026-12-01T00:00:00.000Z",
      attempts: [],
    });
    expect(failed.nextAttemptAt).toBeNull();
    expect(failed.lastError?.startsWith("no answer x")).toBe(true);
    expect(failed.lastError?.length).toBe(301);
  });
});

describe.skipIf(chromiumMissing("webhooks"))("webhooks in Connections, end to end", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];
  let receiver: WebhookReceiver;
  let hook: { path: string; url: string };
  let secret = "";
  let webhookId = "";

  const panel = () => page.getByRole("region", { name: "Webhooks" });
  const row = () => panel().getByRole("listitem", { name: "Ops", exact: true });
  /** What the panel's last action came to (done, or why not). */
  const notice = () => panel().locator(".webhook-outcome");
  const log = () => panel().getByRole("region", { name: "Deliveries to Ops" });
  const delivery = (id: string) => log().getByRole("listitem", { name: id, exact: true });
  const secretShown = () => panel().getByRole("region", { name: "Signing secret" }).getByLabel("Secret").inputValue();
  const serverHooks = async () => (await user.client.call("listWebhooks")).webhooks;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    hook = receiver.newPath();
    app = await startBrowserApp({
      name: "webhooks-ui",
      // A fixed port: the offline test stops the server and starts it again at the same address.
      server: {
        port: await freePort(),
        allowPrivateWebhooks: true,
        webhookRetryDelaysMs: [50, 50],
        webhookTimeoutMs: 5_000,
        webhookPollMs: 50,
        maintenanceIntervalMs: 0,
      },
      host: { version: await readDesktopVersion() },
    });
    user = await app.ts.addUser("ada");
    ({ page, pageErrors } = await app.openPage({
      viewport: { width: 1280, height: 1200 },
      locale: "en-US",
      permissions: ["clipboard-read", "clipboard-write"],
    }));
  });

  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  it("adds a webhook with the events picked, shows its secret once with Copy, and a test is delivered, verified and logged with 200", async () => {
    await signInOnPage(page, user.apiKey, app.ts.server.url);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Connections" }).click();
    await expect.poll(() => panel().textContent(), PATIENCE).toContain("No webhook yet.");

    const form = panel().getByRole("form", { name: "Add a webhook" });
    await form.getByLabel("Address").fill(hook.url);
    await form.getByLabel("Description (optional)").fill("Ops");
    // "A message arrives" is picked already; the heartbeat is added.
    expect(await form.getByRole("checkbox", { name: "A message arrives in your inbox" }).isChecked()).toBe(true);
    await form.getByRole("checkbox", { name: "A heartbeat run ends" }).check();
    await form.getByRole("button", { name: "Add webhook" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Added “Ops”. Copy its signing secret now: it is not shown again.");

    secret = await secretShown();
    expect(secret).toMatch(/^whsec_/);
    receiver.trust(hook.path, secret);
    await panel().getByRole("button", { name: "Copy secret" }).click();
    await expect.poll(() => panel().getByRole("status").filter({ hasText: "Secret copied." }).count(), PATIENCE).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

    const [stored] = await serverHooks();
    expect(stored).toMatchObject({ url: hook.url, description: "Ops", events: ["message.received", "heartbeat.run.completed"] });
    webhookId = stored?.id ?? "";
    // Shown once: gone after Done, and no later answer (nor a reload) shows it.
    await panel().getByRole("button", { name: "Done" }).click();
    expect(await panel().getByRole("region", { name: "Signing secret" }).count()).toBe(0);
    expect(JSON.stringify(await user.client.call("listWebhooks"))).not.toContain(secret.slice(6));
    await expect.poll(() => row().textContent(), PATIENCE).toContain("Message received · Heartbeat run ended");
    expect(await row().locator(".status-pill").textContent()).toBe("On");

    await row().getByRole("button", { name: "Send test" }).click();
    await expect
      .poll(() => notice().textContent(), PATIENCE)
      .toBe("Sent a test to “Ops”: its delivery log shows how the receiver answered.");
    const received = await receiver.next((w) => w.path === hook.path && w.payload.type === "webhook.test");
    expect(received.verifiedWith).toEqual([secret]);
    await expect.poll(() => delivery(received.id).locator(".webhook-delivery-status").textContent(), PATIENCE).toBe("Delivered (200)");
    expect(await delivery(received.id).locator(".webhook-code").allTextContents()).toEqual(["200"]);
    expect(await delivery(received.id).textContent()).toContain("Test");
    expect(receiver.rejected).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("shows a failing receiver's status codes, and Send again delivers the same webhook-id once it answers", async () => {
    receiver.answer(hook.path, { status: 500 }, { status: 503 }, { status: 500 });
    const before = receiver.forPath(hook.path).length;
    await row().getByRole("button", { name: "Send test" }).click();
    const id = (await receiver.nth(before + 1, (w) => w.path === hook.path))[before]?.id ?? "";
    await expect.poll(() => delivery(id).locator(".webhook-delivery-status").textContent(), PATIENCE).toBe("Failed after 3 tries (500)");
    expect(await delivery(id).locator(".webhook-code").allTextContents()).toEqual(["500", "503", "500"]);

    await delivery(id).getByRole("button", { name: "Send again" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Sending the Test delivery to “Ops” again, with the same webhook-id.");
    const sends = await receiver.nth(4, (w) => w.id === id);
    expect(sends.map((w) => w.body)).toEqual(Array(4).fill(sends[0]?.body));
    await expect.poll(() => delivery(id).locator(".webhook-delivery-status").textContent(), PATIENCE).toBe("Delivered (200)");
    expect(receiver.rejected).toEqual([]);
    await screenshot(page, "connections-webhooks");
  });

  it("rotates the secret: the new one is shown once, and deliveries verify with the old and the new one", async () => {
    await row().getByRole("button", { name: "Rotate secret" }).click();
    await row().getByRole("alertdialog").getByRole("button", { name: "Rotate secret" }).click();
    await expect
      .poll(() => notice().textContent(), PATIENCE)
      .toMatch(/^New signing secret for “Ops”: copy it now\. The old one keeps signing beside it until /);
    const rotated = await secretShown();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await expect.poll(() => row().textContent(), PATIENCE).toContain("The previous secret also signs until");

    // Each delivery must now verify with both secrets, with standardwebhooks.
    receiver.trust(hook.path, secret, rotated);
    const before = receiver.forPath(hook.path).length;
    await row().getByRole("button", { name: "Send test" }).click();
    const signed = (await receiver.nth(before + 1, (w) => w.path === hook.path))[before];
    expect(signed?.verifiedWith).toEqual([secret, rotated]);
    expect(receiver.rejected).toEqual([]);
    secret = rotated;
  });

  it("turns the webhook off and on, and says in words what failed", async () => {
    await row().getByRole("button", { name: "Turn off" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Turned “Ops” off: nothing is sent to it until you turn it on again.");
    await expect.poll(() => row().locator(".status-pill").textContent(), PATIENCE).toBe("Off");
    expect(await row().textContent()).toContain("Turned off by you.");
    expect(await row().getByRole("button", { name: "Send test" }).isDisabled()).toBe(true);
    expect((await serverHooks())[0]?.status).toBe("disabled");
    await row().getByRole("button", { name: "Turn on" }).click();
    await expect
      .poll(() => notice().textContent(), PATIENCE)
      .toBe("Turned “Ops” on: its failures are forgotten and deliveries go out again.");
    await expect.poll(() => row().locator(".status-pill").textContent(), PATIENCE).toBe("On");

    // The host refuses what the server would, in words, and the form keeps what was typed.
    const form = panel().getByRole("form", { name: "Add a webhook" });
    await form.getByLabel("Address").fill("ftp://example.com/hook");
    await form.getByLabel("Description (optional)").fill(HOSTILE);
    await form.getByRole("button", { name: "Add webhook" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("The address must start with https:// (or http://).");
    expect(await form.getByLabel("Address").inputValue()).toBe("ftp://example.com/hook");

    // Markup in a description is shown as text.
    await form.getByLabel("Address").fill(`${hook.url}-second`);
    await form.getByRole("button", { name: "Add webhook" }).click();
    await expect.poll(() => panel().getByRole("listitem", { name: HOSTILE, exact: true }).count(), PATIENCE).toBe(1);
    expect(await page.evaluate(() => (window as { __hookPwned?: unknown }).__hookPwned)).toBeUndefined();
    const second = (await serverHooks()).find((w) => w.description === HOSTILE);
    await panel().getByRole("button", { name: "Done" }).click();

    // Removed elsewhere (another device): an action on it says so, and the list catches up.
    await user.client.call("deleteWebhook", { params: { id: second?.id ?? "" } });
    await panel().getByRole("listitem", { name: HOSTILE, exact: true }).getByRole("button", { name: "Send test" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe(WEBHOOK_GONE);
    await expect.poll(() => panel().getByRole("listitem", { name: HOSTILE, exact: true }).count(), PATIENCE).toBe(0);
  });

  it("the host: a pairing-code key is told in words, and bad input is refused before any request", async () => {
    const session = (apiKey: string) =>
      ({
        credentials: () => ({ serverUrl: app.ts.server.url, apiKey, userId: 1 }),
        client: () => serverClient(app.ts.server.url, apiKey),
      }) as unknown as SessionService;
    const paired = await app.ts.addUser("pat", SIGN_IN_SCOPES);
    expect(await createWebhookMethods(session(paired.apiKey)).listWebhooks()).toMatchObject({
      supported: true,
      webhooks: [],
      notAllowed: WEBHOOKS_NOT_ALLOWED,
    });
    // A server without the routes (the real one asked under a path prefix answers 404 route_not_found).
    const older = createWebhookMethods({
      credentials: () => null,
      client: () => serverClient(`${app.ts.server.url}/older`, user.apiKey),
    } as unknown as SessionService);
    expect(await older.listWebhooks()).toMatchObject({ supported: false, webhooks: [] });
    await expect(older.testWebhook({ id: webhookId })).rejects.toThrow(WEBHOOKS_UNSUPPORTED);
    const methods = createWebhookMethods(session(user.apiKey));
    await expect(methods.addWebhook({ url: hook.url, events: ["message.sent"] })).rejects.toThrow("is not an event this server sends");
    await expect(methods.addWebhook({ url: hook.url, events: [] })).rejects.toThrow("Pick at least one event");
    await expect(methods.replayWebhookDelivery({ id: webhookId, deliveryId: "" })).rejects.toThrow("invalid input");
    // Another user's endpoint is as gone as one that never was.
    await expect(createWebhookMethods(session(paired.apiKey)).testWebhook({ id: webhookId })).rejects.toThrow(/lacks os\.tools:write/);
    const other = await app.ts.addUser("eve");
    await expect(createWebhookMethods(session(other.apiKey)).testWebhook({ id: webhookId })).rejects.toThrow(WEBHOOK_GONE);
  });

  it("while the server is down says so in words and keeps the list; once back it works, and Remove (asked first) deletes it", async () => {
    await app.ts.server.close();
    await row().getByRole("button", { name: "Send test" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe(CONNECTIONS_OFFLINE);
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Connections are kept on the server" }).count(), PATIENCE).toBe(1);
    expect(await row().count()).toBe(1);

    await app.ts.restart();
    await expect.poll(() => page.getByTestId("sync-status").textContent(), PATIENCE).toBe("Synced");
    await row().getByRole("button", { name: "Remove" }).click();
    await row().getByRole("alertdialog").getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Removed “Ops” with its pending deliveries and its log.");
    await expect.poll(() => panel().textContent(), PATIENCE).toContain("No webhook yet.");
    expect(await serverHooks()).toEqual([]);
    await expect(user.client.call("getWebhook", { params: { id: webhookId } })).rejects.toMatchObject({ status: 404 });
    // The failed calls reached the host, which answered them with an error: the browser logs those as 500s.
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  });
});
