import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, freePort, screenshot, signInOnPage } from "./browser-harness";

/** Calls go page → host → server and back, and replication backs off while the server is down: be patient. */
const PATIENCE = { timeout: 60_000, intervals: [100, 250, 500, 1000] };

describe.skipIf(chromiumMissing("connections"))("the Connections section in web mode against a real server", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];

  const panel = (title: string) => page.getByRole("region", { name: title });
  const namespaces = () => panel("Tool namespaces");
  const todosSwitch = () => namespaces().getByRole("switch", { name: "todos" });
  const syncStatus = () => page.getByTestId("sync-status").textContent();
  /** The tools the server offers this user's key, by namespace. */
  const serverNamespaces = async () => {
    const { tools } = await user.client.call("listTools");
    return new Set(tools.map((tool) => tool.namespace));
  };

  beforeAll(async () => {
    // A fixed port: the offline test stops the server and starts it again at the same address.
    app = await startBrowserApp({
      name: "connections-ui",
      server: { port: await freePort() },
      host: { version: await readDesktopVersion() },
    });
    user = await app.ts.addUser("ada");
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 900 }, locale: "en-US" }));
  });

  afterAll(async () => {
    await app?.close();
  });

  it("opens with Mod+8 and lists the namespaces as the server has them", async () => {
    await signInOnPage(page, user.apiKey, app.ts.server.url);
    await expect.poll(syncStatus, PATIENCE).toBe("Synced");
    await page.keyboard.press("Control+8");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Connections");
    expect(
      await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Connections" }).getAttribute("aria-current"),
    ).toBe("page");

    await expect.poll(() => namespaces().getByRole("switch").count(), PATIENCE).toBeGreaterThan(0);
    const { namespaces: onServer } = await user.client.call("getToolNamespaces");
    const shown = await namespaces()
      .getByRole("switch")
      .evaluateAll((inputs) => inputs.map((input) => input.closest("label")?.textContent));
    expect(shown).toEqual(onServer.map((namespace) => namespace.namespace));
    expect(await todosSwitch().isChecked()).toBe(true);
    const todos = onServer.find((namespace) => namespace.namespace === "todos");
    expect(await namespaces().getByRole("listitem").filter({ hasText: "todos" }).textContent()).toContain(
      `${todos?.toolCount} tools · built in`,
    );
    expect(pageErrors).toEqual([]);
  });

  it("turns a namespace off, and the server's tool list loses its tools; on again brings them back", async () => {
    expect(await serverNamespaces()).toContain("todos");
    await todosSwitch().click();
    await expect.poll(() => namespaces().getByRole("status").textContent(), PATIENCE).toContain("“todos” is off");
    expect(await todosSwitch().isChecked()).toBe(false);
    expect(await serverNamespaces()).not.toContain("todos");
    expect(await serverNamespaces()).toContain("notes");
    const { namespaces: afterOff } = await user.client.call("getToolNamespaces");
    expect(afterOff.find((namespace) => namespace.namespace === "todos")?.enabled).toBe(false);

    // What the server stored is what a reload shows.
    await page.reload();
    await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Connections" }).click();
    await expect.poll(() => todosSwitch().count(), PATIENCE).toBe(1);
    expect(await todosSwitch().isChecked()).toBe(false);

    await todosSwitch().click();
    await expect.poll(() => namespaces().getByRole("status").textContent(), PATIENCE).toContain("“todos” is on");
    expect(await todosSwitch().isChecked()).toBe(true);
    expect(await serverNamespaces()).toContain("todos");
    expect(pageErrors).toEqual([]);
  });

  it("says plainly that nothing is connected yet", async () => {
    await expect.poll(() => panel("Remote tool servers").textContent(), PATIENCE).toContain("No remote tool server yet.");
    await expect.poll(() => panel("Connected apps").textContent(), PATIENCE).toContain("No app is connected to your account.");
    await expect.poll(() => panel("Integrations").textContent(), PATIENCE).toContain("No integration is connected.");
    expect(await page.getByRole("alert").count()).toBe(0);
    await screenshot(page, "connections");
    expect(pageErrors).toEqual([]);
  });

  it("says in words that a change failed while the server is down, leaves the switch as it was, and works once it is back", async () => {
    await app.ts.server.close();
    await todosSwitch().click();
    await expect
      .poll(() => namespaces().getByRole("alert").textContent(), PATIENCE)
      .toBe(
        "“todos” could not be turned off: Can't reach the server right now. Connections are kept on the server; try again once you are back online.",
      );
    expect(await todosSwitch().isChecked()).toBe(true);
    await expect.poll(syncStatus, PATIENCE).toMatch(/^Offline/);
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Connections are kept on the server" }).count(), PATIENCE).toBe(1);
    // What was shown stays on screen.
    expect(await namespaces().getByRole("switch").count()).toBeGreaterThan(0);

    await app.ts.restart();
    await expect.poll(syncStatus, PATIENCE).toBe("Synced");
    await todosSwitch().click();
    await expect.poll(() => namespaces().getByRole("status").textContent(), PATIENCE).toContain("“todos” is off");
    // The earlier failure's alert goes once the change succeeds (a render later on a loaded machine).
    await expect.poll(() => namespaces().getByRole("alert").count(), PATIENCE).toBe(0);
    expect(await serverNamespaces()).not.toContain("todos");
    // The failed calls reached the host, which answered them with an error: the browser logs those as 500s.
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  });
});
