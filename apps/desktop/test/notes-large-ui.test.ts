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

  it(
    "the quick switcher in the first seconds searches what is known, says the rest is loading, and Enter does what it says (issue #26, point 5)",
    async () => {
      // Quitting writes the outline; the next start shows its first screen (the 100 most recent
      // notes) until the whole outline is read. That read is held here, as on a slow machine.
      await app.restart();
      ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 800 }, locale: "en-US" }));
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route("**/__host/getWorkspaceOutline", async (route) => {
        // The same method answers the first screen (`{firstScreen: true}`), which goes at once.
        if (!route.request().postData()?.includes("firstScreen")) await held;
        await route.continue();
      });
      await page.reload();
      await rows().first().waitFor(PATIENCE);
      expect(await rows().count()).toBeLessThanOrEqual(100);

      await page.getByRole("button", { name: "Go to note…" }).click();
      const switcher = page.getByRole("dialog", { name: "Go to note" });
      const options = () => switcher.getByRole("option").allTextContents();
      const status = () => switcher.getByRole("status").textContent();
      // A recent note is found at once, with word that more may match.
      await switcher.getByRole("combobox").fill("Note 259");
      await expect.poll(options, PATIENCE).toEqual(["Note 259"]);
      expect(await status()).toContain("Still loading");
      // An old one is not known yet: no "No note is called that", and Enter is kept until it is.
      await switcher.getByRole("combobox").fill("Note 007");
      await expect.poll(status, PATIENCE).toContain("still loading");
      expect(await status()).not.toContain("No note is called that");
      await page.keyboard.press("Enter");
      await expect.poll(status, PATIENCE).toContain("opens as soon as it is found");
      release();
      await expect.poll(() => page.getByRole("textbox", { name: "Title" }).inputValue(), PATIENCE).toBe("Note 007");
      expect(await switcher.count()).toBe(0);
      await page.unroute("**/__host/getWorkspaceOutline");

      // An exact title ranks first, before titles that merely contain it, even more recent ones.
      await user.client.call("createNote", { body: { title: "Note 42", content: "the real one" } });
      const { notes } = await user.client.call("listNotes", { query: { limit: 200 } });
      for (const title of ["Note 242", "Note 142"]) {
        const id = notes.find((note) => note.title === title)?.id ?? 0;
        await user.client.call("updateNote", { params: { id }, body: { content: `${title}, changed later` } });
      }
      const newest = page.getByRole("list", { name: "Notes" }).getByRole("button").first();
      await expect.poll(() => newest.textContent(), PATIENCE).toContain("Note 142");
      await page.getByRole("button", { name: "Go to note…" }).click();
      await switcher.getByRole("combobox").fill("note 42");
      await expect.poll(async () => (await options()).slice(0, 3), PATIENCE).toEqual(["Note 42", "Note 142", "Note 242"]);
      await page.keyboard.press("Enter");
      await expect.poll(() => page.getByRole("textbox", { name: "Title" }).inputValue(), PATIENCE).toBe("Note 42");
      expect(pageErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
