import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, signInOnPage } from "./browser-harness";

/**
 * A workspace larger than the note list renders at once, in web mode against a real server: the
 * list shows its first rows at once and the rest as it is scrolled, and the host keeps only the
 * notes in use open (the rest are on disk). Be patient; never assert on speed.
 */
const PATIENCE = { timeout: 60_000, intervals: [100, 250, 500, 1000] };
const TEST_TIMEOUT = 180_000;
const NOTES = 260;
/** The host's default of synced notes kept open, plus the workspace, the todos and the one open note. */
const MOST_OPEN = 100 + 3;

describe.skipIf(chromiumMissing("notes in a large workspace"))("a large workspace (web mode, real server)", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];
  const rows = () => page.getByRole("list", { name: "Notes" }).locator("li:not(.note-list-more)");

  beforeAll(async () => {
    app = await startBrowserApp({ name: "notes-large" });
    user = await app.ts.addUser("lara");
    for (let index = 0; index < NOTES; index++) {
      await user.client.call("createNote", { body: { title: `Note ${String(index).padStart(3, "0")}`, content: `body ${index}` } });
    }
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 800 }, locale: "en-US" }));
  }, TEST_TIMEOUT);

  afterAll(() => app?.close());

  it(
    "lists the first rows at once and the rest as the list is scrolled, with the host holding only what is in use",
    async () => {
      await signInOnPage(page, user.apiKey, app.ts.server.url);
      await expect.poll(() => page.getByTestId("sync-status").textContent(), PATIENCE).toBe("Synced");
      await expect.poll(() => rows().count(), PATIENCE).toBe(200);

      await rows().last().scrollIntoViewIfNeeded();
      await expect.poll(() => rows().count(), PATIENCE).toBe(NOTES);

      // Every note replicated, yet only the recently used ones stay open in the host.
      await rows().last().getByRole("button").click();
      await page
        .getByRole("textbox", { name: "Note body" })
        .filter({ hasText: /body \d+/ })
        .waitFor(PATIENCE);
      await expect.poll(() => app.host.openDocuments(), PATIENCE).toBeLessThanOrEqual(MOST_OPEN);
      expect(pageErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
