import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDITOR_MIN } from "../src/renderer/notes/pane-layout";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, freePort, screenshot, signInOnPage } from "./browser-harness";

/**
 * Daily use of the notes section, as someone used to Obsidian, Joplin, Notion or Things works:
 * narrow windows, the keyboard, right-to-left text, search, previews, snapshots, folders.
 * Headless Chromium in web mode against a real server; be patient, never assert on speed.
 */
const PATIENCE = { timeout: 60_000, intervals: [100, 250, 500, 1000] };
const WAIT = { timeout: 60_000 };
/** Longer than any one wait, so a failing wait reports itself rather than the test's timeout. */
const TEST_TIMEOUT = 180_000;

describe.skipIf(chromiumMissing("notes daily use"))("notes in daily use (web mode, real server)", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];

  const main = () => page.getByRole("main");
  const noteList = () => page.getByRole("list", { name: "Notes" });
  const body = () => page.getByRole("textbox", { name: "Note body" });
  const titleInput = () => page.getByRole("textbox", { name: "Title" });
  const folders = () => page.getByRole("navigation", { name: "Folders" });
  const syncStatus = () => page.getByTestId("sync-status").textContent();
  /** An element's rendered width; 0 when there is none. */
  const widthOf = async (selector: string) => {
    const element = page.locator(selector).first();
    return (await element.count()) === 0 ? 0 : ((await element.boundingBox())?.width ?? 0);
  };
  const focusedIs = (selector: string) => page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector);

  const restNote = async (title: string) => {
    const { notes } = await user.client.call("listNotes", { query: {} });
    return notes.find((note) => note.title === title);
  };

  const openNote = async (title: string) => {
    await noteList().getByRole("button", { name: title }).click();
    await expect.poll(() => titleInput().inputValue(), PATIENCE).toBe(title);
    await body().waitFor(WAIT);
  };

  /** A new note through the keyboard only: Ctrl+N, the title, Enter into the body, the text. */
  const createNoteByKeyboard = async (title: string, lines: readonly string[]) => {
    await page.keyboard.press("Control+n");
    await expect.poll(() => focusedIs("input.note-title"), PATIENCE).toBe(true);
    await page.keyboard.type(title);
    // As a person does, Enter once the new note's body is on screen (it loads from the local hub).
    await body().waitFor(WAIT);
    await page.keyboard.press("Enter");
    await expect.poll(() => focusedIs(".note-body-content"), PATIENCE).toBe(true);
    for (const [index, line] of lines.entries()) {
      if (index > 0) await page.keyboard.press("Enter");
      await page.keyboard.type(line);
    }
    await noteList().getByRole("button", { name: title }).waitFor(WAIT);
  };

  beforeAll(async () => {
    // A fixed port: the offline check stops the server and starts it again at the same address.
    app = await startBrowserApp({ name: "notes-daily", server: { port: await freePort() } });
    user = await app.ts.addUser("dana");
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 800 }, locale: "en-US" }));
  });

  afterAll(() => app?.close());

  it(
    "signs in",
    async () => {
      await signInOnPage(page, user.apiKey, app.ts.server.url);
      await main().getByRole("button", { name: "New note" }).waitFor(WAIT);
      await expect.poll(syncStatus, PATIENCE).toBe("Synced");
    },
    TEST_TIMEOUT,
  );

  it(
    "creates notes from the keyboard: Ctrl+N, the title, Enter into the body",
    async () => {
      await createNoteByKeyboard("Shopping list", ["Milk, eggs and 🎉 party hats", "Bread"]);
      await createNoteByKeyboard("Reading", ["The quiet party of the book club"]);
      await expect.poll(() => body().textContent(), PATIENCE).toBe("The quiet party of the book club");
      await expect.poll(async () => (await restNote("Shopping list"))?.title, PATIENCE).toBe("Shopping list");
    },
    TEST_TIMEOUT,
  );

  it(
    "shows a preview line under each title in the note list",
    async () => {
      const row = noteList().getByRole("button", { name: /Shopping list/ });
      await expect.poll(() => row.locator(".note-item-preview").textContent(), PATIENCE).toBe("Milk, eggs and 🎉 party hats Bread");
      // The preview follows an edit of the body.
      await openNote("Reading");
      await body().click();
      await page.keyboard.press("Control+End");
      await page.keyboard.type(" met");
      await expect
        .poll(
          () =>
            noteList()
              .getByRole("button", { name: /Reading/ })
              .locator(".note-item-preview")
              .textContent(),
          PATIENCE,
        )
        .toBe("The quiet party of the book club met");
    },
    TEST_TIMEOUT,
  );

  it(
    "moves through the note list with the arrow keys",
    async () => {
      const rows = noteList().locator("button.note-item");
      await rows.first().focus();
      expect(await rows.first().textContent()).toContain("Reading");
      await page.keyboard.press("ArrowDown");
      await expect.poll(() => titleInput().inputValue(), PATIENCE).toBe("Shopping list");
      expect(await focusedIs("button.note-item[aria-current='true']")).toBe(true);
      await page.keyboard.press("ArrowUp");
      await expect.poll(() => titleInput().inputValue(), PATIENCE).toBe("Reading");
    },
    TEST_TIMEOUT,
  );

  it(
    "goes to a note by title with the quick switcher (Ctrl+P, Ctrl+K)",
    async () => {
      await page.keyboard.press("Control+p");
      const switcher = page.getByRole("dialog", { name: "Go to note" });
      await switcher.waitFor(WAIT);
      await page.keyboard.type("shop");
      expect(await switcher.getByRole("option").allTextContents()).toEqual(["Shopping list"]);
      await page.keyboard.press("Enter");
      await expect.poll(() => switcher.isVisible(), PATIENCE).toBe(false);
      await expect.poll(() => titleInput().inputValue(), PATIENCE).toBe("Shopping list");

      // Ctrl+K too; the arrow keys choose; Escape closes without opening anything.
      await page.keyboard.press("Control+k");
      await switcher.waitFor(WAIT);
      await page.keyboard.press("ArrowDown");
      expect(await switcher.getByRole("option", { selected: true }).textContent()).toBe("Shopping list");
      await page.keyboard.press("Escape");
      await expect.poll(() => switcher.isVisible(), PATIENCE).toBe(false);
      expect(await titleInput().inputValue()).toBe("Shopping list");

      // A title nothing matches: Enter creates that note. (Right after the switcher closed, the next Ctrl+P
      // is now and then not acted on — cause not found yet, see the closing note of 2026-11-25; a second press
      // is harmless, so the test presses again as a person would.)
      await expect
        .poll(async () => {
          if (!(await switcher.isVisible())) await page.keyboard.press("Control+p");
          return switcher.isVisible();
        }, PATIENCE)
        .toBe(true);
      await page.keyboard.type("Packing list");
      expect(await switcher.textContent()).toContain("Enter creates “Packing list”");
      await page.keyboard.press("Enter");
      await expect.poll(() => titleInput().inputValue(), PATIENCE).toBe("Packing list");
      await noteList()
        .getByRole("button", { name: /Packing list/ })
        .waitFor(WAIT);
    },
    TEST_TIMEOUT,
  );

  it(
    "focuses search with Ctrl+Shift+F and lists every shortcut on a sheet (Ctrl+/)",
    async () => {
      await page.keyboard.press("Control+Shift+F");
      await expect.poll(() => focusedIs("input[type='search']"), PATIENCE).toBe(true);
      await page.keyboard.press("Control+/");
      const sheet = page.getByRole("dialog", { name: "Keyboard shortcuts" });
      await sheet.waitFor(WAIT);
      const text = await sheet.textContent();
      for (const key of ["Ctrl+N", "Ctrl+P or Ctrl+K", "Ctrl+Shift+F", "Escape"]) expect(text).toContain(key);
      await page.keyboard.press("Escape");
      await expect.poll(() => sheet.isVisible(), PATIENCE).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    "highlights what was searched for, and finds emoji",
    async () => {
      await expect
        .poll(async () => (await app.host.api.searchNotes({ query: "party" })).results.map((hit) => hit.title).sort(), PATIENCE)
        .toEqual(["Reading", "Shopping list"]);
      const search = page.getByRole("searchbox", { name: "Search notes" });
      await search.fill("party");
      const results = page.getByRole("region", { name: "Search results" });
      await expect.poll(() => results.getByRole("button").count(), PATIENCE).toBe(2);
      const marks = await results.locator(".search-snippet mark").allTextContents();
      expect(marks.length).toBeGreaterThanOrEqual(2);
      expect(new Set(marks.map((mark) => mark.toLowerCase()))).toEqual(new Set(["party"]));
      await screenshot(page, "notes-search");

      await search.fill("🎉");
      await expect.poll(() => results.getByRole("button").allTextContents(), PATIENCE).toEqual([expect.stringContaining("Shopping list")]);
      expect(await results.locator(".search-source").textContent()).toBe("Results from the server");
      expect(await results.locator("mark").first().textContent()).toBe("🎉");
      await search.press("Escape");
      await noteList().waitFor(WAIT);
    },
    TEST_TIMEOUT,
  );

  it(
    "keeps a folder name typed and left by a click elsewhere; Cancel drops it",
    async () => {
      await folders().getByRole("button", { name: "New folder" }).click();
      const nameField = folders().getByRole("textbox", { name: "Folder name" });
      expect(await nameField.getAttribute("placeholder")).toBe("New folder name");
      await nameField.fill("Household");
      // Leaving the field (a click on the note list's heading) keeps what was typed.
      await main().locator(".list-pane .pane-header h3").click();
      await folders().getByRole("button", { name: "Household" }).waitFor(WAIT);

      await folders().getByRole("button", { name: "New folder" }).click();
      await nameField.fill("Never mind");
      await folders().getByRole("button", { name: "Cancel" }).click();
      await expect.poll(() => nameField.count(), PATIENCE).toBe(0);
      expect(await folders().getByRole("button", { name: "Never mind" }).count()).toBe(0);

      // The selected folder's actions sit above the tree, not between a folder and its children.
      await folders().getByRole("button", { name: "Household" }).click();
      await folders().getByRole("button", { name: "New subfolder" }).click();
      await folders().getByRole("textbox", { name: "Folder name" }).fill("Kitchen");
      await page.keyboard.press("Enter");
      await folders().getByRole("button", { name: "Kitchen" }).waitFor(WAIT);
      await folders().getByRole("button", { name: "Household" }).click();
      const actionsBottom = (await folders().locator(".folder-actions").boundingBox())?.y ?? 0;
      const parentTop = (await folders().getByRole("button", { name: "Household" }).boundingBox())?.y ?? 0;
      expect(actionsBottom).toBeLessThan(parentTop);

      // A very long name stays on its line, cut with an ellipsis, in the pane's width.
      const long = `Archive ${"of old things ".repeat(12)}`.trim();
      await user.client.call("createFolder", { body: { name: long } });
      const longButton = folders().getByRole("button", { name: long });
      await longButton.waitFor(WAIT);
      expect((await longButton.boundingBox())?.width ?? 0).toBeLessThanOrEqual(await widthOf(".folder-pane"));
      expect(await longButton.evaluate((element) => element.scrollWidth > element.clientWidth)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    "names each note's folder under All notes",
    async () => {
      await folders().getByRole("button", { name: "All notes" }).click();
      await openNote("Shopping list");
      await main().getByRole("combobox", { name: "Folder" }).selectOption({ label: "Household" });
      await expect
        .poll(
          () =>
            noteList()
              .getByRole("button", { name: /Shopping list/ })
              .locator(".note-item-folder")
              .textContent(),
          PATIENCE,
        )
        .toBe("Household");
      expect(
        await noteList()
          .getByRole("button", { name: /Reading/ })
          .locator(".note-item-folder")
          .count(),
      ).toBe(0);
    },
    TEST_TIMEOUT,
  );

  it(
    "sets the direction of every block, title and row from its own text (dir=auto)",
    async () => {
      await createNoteByKeyboard("שלום עולם", ["זו שורה בעברית", "And this line is English"]);
      expect(await titleInput().getAttribute("dir")).toBe("auto");
      expect(await titleInput().evaluate((element) => getComputedStyle(element).direction)).toBe("rtl");
      const paragraphs = body().locator("p");
      await expect.poll(() => paragraphs.count(), PATIENCE).toBe(2);
      expect(await paragraphs.evaluateAll((elements) => elements.map((element) => element.getAttribute("dir")))).toEqual(["auto", "auto"]);
      expect(await paragraphs.evaluateAll((elements) => elements.map((element) => getComputedStyle(element).direction))).toEqual([
        "rtl",
        "ltr",
      ]);
      const row = noteList().getByRole("button", { name: /שלום עולם/ });
      expect(await row.locator(".note-item-title span[dir='auto']").evaluate((element) => getComputedStyle(element).direction)).toBe("rtl");
      // The server has the title as typed (direction is the page's business, not the data's).
      await expect.poll(async () => (await restNote("שלום עולם"))?.title, PATIENCE).toBe("שלום עולם");
      // Todos too: a Hebrew title is a right-to-left line, so its closing "!" shows at its left end.
      await user.client.call("createTodo", { body: { title: "לקנות חלב!" } });
      await user.client.call("createTodo", { body: { title: "Buy bread!" } });
      await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Todos" }).click();
      await page.getByRole("tab", { name: /All/ }).click();
      const exclamationAtLeft = (title: string) =>
        page.locator(".todo-title", { hasText: title }).evaluate((element) => {
          const text = [...element.querySelectorAll("*"), element]
            .flatMap((node) => [...node.childNodes])
            .find((node) => node.nodeType === Node.TEXT_NODE && node.textContent?.includes("!")) as Text;
          const rectOf = (at: number) => {
            const range = document.createRange();
            range.setStart(text, at);
            range.setEnd(text, at + 1);
            return range.getBoundingClientRect();
          };
          return rectOf(text.data.length - 1).right <= rectOf(0).left + 1;
        });
      await page.locator(".todo-title", { hasText: "לקנות חלב!" }).waitFor(WAIT);
      expect(await exclamationAtLeft("לקנות חלב!")).toBe(true);
      expect(await exclamationAtLeft("Buy bread!")).toBe(false);
      await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Notes" }).click();
      await noteList().waitFor(WAIT);
    },
    TEST_TIMEOUT,
  );

  it(
    "numbers snapshots, and the one a restore makes names the number it came from",
    async () => {
      await openNote("Reading");
      await main().getByRole("button", { name: "Snapshots", exact: true }).click();
      const panel = page.getByRole("complementary", { name: "Snapshots" });
      await panel.getByText("No snapshots yet.").waitFor(WAIT);
      await expect.poll(async () => (await restNote("Reading"))?.id, PATIENCE).toBeDefined();
      await panel.getByRole("textbox", { name: "Snapshot label" }).fill("First draft");
      await panel.getByRole("button", { name: "Save snapshot" }).click();
      const names = () => panel.locator(".snapshot-name").allTextContents();
      await expect.poll(names, PATIENCE).toEqual(["Snapshot 1 · First draft"]);
      await panel.getByRole("button", { name: "Save snapshot" }).click();
      await expect.poll(names, PATIENCE).toEqual(["Snapshot 2", "Snapshot 1 · First draft"]);

      await panel.getByRole("button", { name: /Snapshot 1/ }).click();
      await panel.getByRole("button", { name: "Restore" }).click();
      const question = panel.getByRole("alertdialog");
      expect(await question.textContent()).toContain("Snapshot 1 · First draft");
      await question.getByRole("button", { name: "Restore" }).click();
      await expect.poll(names, PATIENCE).toEqual(["Snapshot 3 · Before restoring snapshot 1", "Snapshot 2", "Snapshot 1 · First draft"]);
    },
    TEST_TIMEOUT,
  );

  it(
    "keeps a readable editor from 800 px wide: panes collapse, open over it, and resize",
    async () => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await openNote("Reading");
      if ((await page.locator(".snapshots-panel").count()) === 0)
        await main().getByRole("button", { name: "Snapshots", exact: true }).click();
      await expect.poll(() => widthOf(".folder-pane"), PATIENCE).toBeGreaterThan(0);
      expect(await widthOf(".list-pane")).toBeGreaterThan(0);
      expect(await widthOf(".note-main")).toBeGreaterThanOrEqual(EDITOR_MIN);

      await page.setViewportSize({ width: 800, height: 700 });
      // The snapshots panel is still open: the folders and the list give way, the editor keeps its column.
      await expect.poll(() => page.locator(".folder-pane").count(), PATIENCE).toBe(0);
      expect(await widthOf(".note-main")).toBeGreaterThanOrEqual(EDITOR_MIN);
      expect(await widthOf(".snapshots-panel")).toBeGreaterThan(0);
      const toolbar = page.getByRole("toolbar", { name: "Notes layout" });
      expect(await toolbar.getByRole("button", { name: "Folders" }).getAttribute("aria-pressed")).toBe("false");

      // Escape closes the snapshots panel; the note list comes back beside the editor.
      await body().click();
      await page.keyboard.press("Escape");
      await expect.poll(() => page.locator(".snapshots-panel").count(), PATIENCE).toBe(0);
      await expect.poll(() => widthOf(".list-pane"), PATIENCE).toBeGreaterThan(0);
      expect(await widthOf(".note-main")).toBeGreaterThanOrEqual(EDITOR_MIN);

      // The folders open over the editor, which keeps its width, and close again with Escape.
      const editorWidth = await widthOf(".note-main");
      await toolbar.getByRole("button", { name: "Folders" }).click();
      await folders().waitFor(WAIT);
      expect(await folders().getAttribute("class")).toContain("pane-overlay");
      expect(await widthOf(".note-main")).toBe(editorWidth);
      await screenshot(page, "notes-narrow");
      await page.keyboard.press("Escape");
      await expect.poll(() => folders().count(), PATIENCE).toBe(0);

      // The note list resizes from its splitter (keys here; a drag does the same), never past the editor's minimum.
      const splitter = page.getByRole("separator", { name: "Resize the note list" });
      const before = await widthOf(".list-pane");
      await splitter.focus();
      await page.keyboard.press("ArrowLeft");
      await expect.poll(() => widthOf(".list-pane"), PATIENCE).toBeLessThan(before);
      await page.keyboard.press("End");
      await expect.poll(async () => (await widthOf(".note-main")) >= EDITOR_MIN, PATIENCE).toBe(true);
      // Hidden by the owner, the list stays hidden until asked for.
      await toolbar.getByRole("button", { name: "Note list" }).click();
      await expect.poll(() => page.locator(".list-pane").count(), PATIENCE).toBe(0);
      await toolbar.getByRole("button", { name: "Note list" }).click();
      await page.locator(".list-pane").waitFor(WAIT);
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.getByRole("navigation", { name: "Folders" }).waitFor(WAIT);
      expect(pageErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "offline, the snapshots panel says why and disables what needs the server",
    async () => {
      await main().getByRole("button", { name: "Snapshots", exact: true }).click();
      const panel = page.getByRole("complementary", { name: "Snapshots" });
      await panel.getByRole("button", { name: "Save snapshot" }).waitFor(WAIT);
      await app.ts.server.close();
      await expect.poll(syncStatus, PATIENCE).toMatch(/^Offline/);
      await expect.poll(() => panel.getByRole("status").textContent(), PATIENCE).toContain("snapshots are kept on the server");
      expect(await panel.getByRole("button", { name: "Save snapshot" }).isDisabled()).toBe(true);
      expect(await panel.getByRole("textbox", { name: "Snapshot label" }).isDisabled()).toBe(true);
      // The notice stays inside the panel.
      const notice = await panel.getByRole("status").boundingBox();
      const box = await panel.boundingBox();
      expect((notice?.x ?? 0) + (notice?.width ?? 0)).toBeLessThanOrEqual((box?.x ?? 0) + (box?.width ?? 0));
      // Opened while offline: the host's own words, no method names around them.
      await main().getByRole("button", { name: "Close snapshots" }).click();
      await main().getByRole("button", { name: "Snapshots", exact: true }).click();
      await expect.poll(() => panel.getByRole("status").textContent(), PATIENCE).toContain("snapshots are kept on the server");
      await expect.poll(() => panel.getByText("Loading…").count(), PATIENCE).toBe(0);
      expect(await panel.textContent()).not.toMatch(/listSnapshots|failed:/);
      expect(await panel.getByRole("button", { name: "Save snapshot" }).isDisabled()).toBe(true);
      await app.ts.restart();
      await expect.poll(syncStatus, PATIENCE).toBe("Synced");
      await expect.poll(() => panel.getByRole("button", { name: "Save snapshot" }).isDisabled(), PATIENCE).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    "after a restart shows the saved outline at once: notes open, read and take typing; titles and new notes follow the workspace",
    async () => {
      const { note } = (await user.client.call("createNote", { body: { title: "First view", content: "opened before the workspace" } }))
        .result;
      await expect
        .poll(
          () =>
            noteList()
              .getByRole("button", { name: /First view/ })
              .count(),
          PATIENCE,
        )
        .toBe(1);
      // Quitting writes the outline; the next start shows it while the workspace document loads.
      await app.restart();
      ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 800 }, locale: "en-US" }));
      const listed = noteList().getByRole("button", { name: /First view/ });
      await listed.waitFor(WAIT);
      // The first view: the list is the outline; what needs the workspace document waits for it.
      expect(await main().getByRole("button", { name: "New note" }).isDisabled()).toBe(true);
      await listed.click();
      const body = page.getByRole("textbox", { name: "Note body" });
      await body.filter({ hasText: "opened before the workspace" }).waitFor(WAIT);
      await body.click();
      await page.keyboard.press("End");
      await page.keyboard.type(" and typed in at once");
      // Then the live workspace document: new notes and titles work again.
      await expect.poll(() => main().getByRole("button", { name: "New note" }).isDisabled(), PATIENCE).toBe(false);
      expect(await main().getByRole("textbox", { name: "Title" }).isDisabled()).toBe(false);
      expect(await main().getByRole("textbox", { name: "Title" }).inputValue()).toBe("First view");
      await expect
        .poll(async () => (await user.client.call("getNote", { params: { id: note.id } })).note.content, PATIENCE)
        .toContain("and typed in at once");
      expect(pageErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
