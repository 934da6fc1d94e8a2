import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, screenshot, signInOnPage } from "./browser-harness";

/** Changes travel page → host → server and back on a busy shared machine: be patient. */
const PATIENCE = { timeout: 30_000 };

describe.skipIf(chromiumMissing("app shell"))("app shell in web mode", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];

  beforeAll(async () => {
    app = await startBrowserApp({ name: "app-shell" });
    user = await app.ts.addUser("shell");
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1100, height: 720 } }));
  });

  afterAll(() => app?.close());

  it("opens on the sign-in screen, with the app info the host reports", async () => {
    await page.getByRole("banner").getByRole("heading", { name: "Tandem" }).waitFor();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    // The renderer has no other source for the version or the mode: showing them proves the typed API works.
    expect(await page.getByTestId("app-info").textContent()).toBe("v0.0.0-test · web");
    await expect.poll(() => page.getByRole("button", { name: "Sign in", exact: true }).isDisabled()).toBe(true);
    await page.getByLabel("Server URL").fill(app.ts.server.url);
    await page.getByRole("button", { name: "Sign in with a code" }).waitFor();
    await screenshot(page, "sign-in");
    expect(pageErrors).toEqual([]);
  });

  it("shows why a wrong key is refused, and stays signed out", async () => {
    const answers: number[] = [];
    const listen = (response: import("playwright-core").Response) => {
      if (response.url().endsWith("/__host/signInWithApiKey")) answers.push(response.status());
    };
    page.on("response", listen);
    await signInOnPage(page, "svc_sk_not_a_real_key");
    const alert = page.getByRole("form", { name: "Sign in with an API key" }).getByRole("alert");
    await alert.waitFor(PATIENCE);
    expect(await alert.textContent()).toBe("The server refused this API key: it is wrong, revoked or expired");
    expect((await app.host.api.getSession()).state).toBe("signed_out");
    // A refused key is the request's failure, not the local host's: a 4xx, never a 500.
    expect(answers).toEqual([422]);
    page.off("response", listen);
    // The refusal reached the page as the host API's error answer, which the browser logs; nothing else may have.
    expect(pageErrors.filter((error) => !error.includes("status of 422"))).toEqual([]);
    pageErrors.length = 0;
    // The key's error stays on screen, above the other way in.
    const codeButton = page.getByRole("button", { name: "Sign in with a code" });
    const [alertBox, codeBox] = await Promise.all([alert.boundingBox(), codeButton.boundingBox()]);
    expect(alertBox && codeBox && alertBox.y + alertBox.height <= codeBox.y).toBe(true);
    expect(await alert.isVisible()).toBe(true);
  });

  it("signs in with a key: the sections, the user and a sync state that reaches synced", async () => {
    await signInOnPage(page, user.apiKey);
    const sections = page.getByRole("navigation", { name: "Sections" }).getByRole("button");
    await sections.first().waitFor(PATIENCE);
    expect(await sections.allTextContents()).toEqual([
      "Notes",
      "Todos",
      "Today",
      "Agent",
      "Heartbeat",
      "Approvals",
      "Bridge",
      "Connections",
      "Inbox",
      "Share links",
      "Raw memory",
      "Usage",
      "Agents",
    ]);
    expect(await page.getByRole("main").getByRole("heading", { level: 2 }).textContent()).toBe("Notes");
    expect(await page.getByRole("banner").textContent()).toContain("shell");
    await expect.poll(() => page.getByTestId("sync-status").textContent(), PATIENCE).toBe("Synced");
    expect(await page.getByRole("status").filter({ hasText: "Synced" }).count()).toBe(1);
  });

  it("switches sections", async () => {
    await page.getByRole("button", { name: "Approvals" }).click();
    expect(await page.getByRole("button", { name: "Approvals" }).getAttribute("aria-current")).toBe("page");
    expect(await page.getByRole("main").getByRole("heading", { level: 2 }).textContent()).toBe("Approvals");
    await page.getByRole("button", { name: "Notes" }).click();
    await page.getByRole("button", { name: "New note" }).waitFor(PATIENCE);
    expect(pageErrors).toEqual([]);
  });

  it("signs out back to the sign-in screen, with the server's address kept", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor(PATIENCE);
    expect(await page.getByLabel("Server URL").inputValue()).toBe(app.ts.server.url);
    expect((await app.host.api.getSession()).state).toBe("signed_out");
    // A reload asks the host again: still signed out.
    await page.reload();
    await page.getByRole("heading", { name: "Sign in" }).waitFor(PATIENCE);
    expect(pageErrors).toEqual([]);
  });

  it("signs in with a code: shows the code, opens the approval page, and says when the owner denies it", async () => {
    await page.getByRole("button", { name: "Sign in with a code" }).click();
    const code = page.getByTestId("user-code");
    await code.waitFor(PATIENCE);
    const userCode = (await code.textContent()) ?? "";
    expect(userCode).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);

    // Web mode's host cannot open a browser (openExternal answers opened: false): the page opens a tab.
    const [popup] = await Promise.all([page.waitForEvent("popup"), page.getByRole("link", { name: "Open the approval page" }).click()]);
    await popup.waitForURL((url) => url.href.includes(userCode), PATIENCE);
    await popup.close();

    await user.client.call("approveDeviceCode", { body: { userCode, action: "deny" } });
    await page.getByText("The code was denied.").waitFor(PATIENCE);
    expect((await app.host.api.getSession()).state).toBe("signed_out");
    expect(await page.getByRole("button", { name: "Sign in with a code" }).isEnabled()).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
