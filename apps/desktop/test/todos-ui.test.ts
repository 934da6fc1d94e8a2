import { todayIn } from "@tandem/core/dates";
import type { TestUser } from "@tandem/server/testing";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, openSection, screenshot } from "./browser-harness";
import { signInAs } from "./host-harness";

/**
 * UTC+14: for most of the day its date is not UTC's, so the views only agree with the server's
 * `timezone` filter if "today" really is the user's, as the page's browser reports it.
 */
const TIME_ZONE = "Pacific/Kiritimati";
/** Changes travel page → local hub → replication → server → SQL views, on a busy shared machine. */
const PATIENCE = { timeout: 20_000, interval: 150 };

/** `YYYY-MM-DD` `days` after `date` (calendar arithmetic, no time zone involved). */
function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

describe.skipIf(chromiumMissing("todos"))("todos in web mode against a real server", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];
  const today = () => todayIn(TIME_ZONE);

  beforeAll(async () => {
    // The package's own version, as the app shows it: the screenshot is the documentation's.
    app = await startBrowserApp({ name: "todos-ui", host: { version: await readDesktopVersion() } });
    user = await app.ts.addUser("tess");
    await signInAs(app.host, app.ts, user);
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1200, height: 760 }, timezoneId: TIME_ZONE, locale: "en-US" }));
    await openSection(page, "Todos");
    await page.getByRole("tablist", { name: "Todo views" }).waitFor();
  });

  afterAll(() => app?.close());

  const tab = (label: string) => page.getByRole("tab", { name: new RegExp(`^${label}\\b`) });
  const openView = async (label: string) => {
    await tab(label).click();
    expect(await tab(label).getAttribute("aria-selected")).toBe("true");
  };
  /** The titles the open view lists, in order (empty when it shows its empty state). */
  const listed = (view: string) =>
    page
      .getByRole("list", { name: `${view} todos` })
      .getByRole("listitem")
      .getByRole("button")
      .allTextContents();
  const counts = async () => (await page.getByRole("tab").allTextContents()).map((text) => text.replace(/\s+/g, " ").trim());
  const row = (title: string) => page.getByRole("listitem").filter({ has: page.getByRole("button", { name: title, exact: true }) });
  const details = (title: string): Locator => page.getByRole("region", { name: title, exact: true });
  const select = async (title: string) => {
    await row(title).getByRole("button", { name: title, exact: true }).click();
    await details(title).waitFor();
  };
  const serverTodos = async (query: Record<string, string | boolean> = {}) => {
    const answer = await user.client.call("listTodos", {
      query: { timezone: TIME_ZONE, includeSteps: true, limit: 200, ...query },
    });
    return answer.result.todos;
  };
  const serverTodo = async (title: string) => (await serverTodos()).find((todo) => todo.title === title);

  async function create(title: string, dueDate: string | null, priority: "" | "1" | "2" | "3" | "4") {
    const form = page.getByRole("form", { name: "New todo" });
    await form.getByLabel("Title").fill(title);
    await form.getByLabel("Due date").fill(dueDate ?? "");
    await form.getByLabel("Priority").selectOption(priority);
    await form.getByRole("button", { name: "Add todo" }).click();
    // The form empties once the todo is in the document (it may belong to another view than the open one).
    await expect.poll(() => form.getByLabel("Title").inputValue()).toBe("");
  }

  it("creates todos with due dates and priorities; each view lists its own, sorted, with counts", async () => {
    await openView("Today");
    expect(await page.getByRole("tabpanel").textContent()).toContain("Nothing is due today.");
    // The Today view starts new todos on today: its date field is already filled in.
    expect(await page.getByRole("form", { name: "New todo" }).getByLabel("Due date").inputValue()).toBe(today());

    await create("Water plants", today(), "");
    await create("Pay rent", today(), "1");
    await create("File taxes", addDays(today(), -1), "2");
    // Created outside the open view, it does not vanish unexplained.
    expect(await page.getByRole("status").filter({ hasText: "File taxes" }).textContent()).toBe("“File taxes” is in Overdue.");
    await create("Plan trip", addDays(today(), 3), "3");
    await create("Read a book", null, "4");
    expect(await page.getByRole("status").filter({ hasText: "Read a book" }).textContent()).toBe("“Read a book” is in All.");

    expect(await counts()).toEqual(["Today 2", "Overdue 1", "Upcoming 1", "All 5", "Completed 0"]);
    expect(await listed("Today")).toEqual(["Pay rent", "Water plants"]);
    expect(await row("Pay rent").textContent()).toContain("P1");
    await openView("Overdue");
    expect(await listed("Overdue")).toEqual(["File taxes"]);
    expect(await row("File taxes").textContent()).toContain("Yesterday");
    await openView("Upcoming");
    expect(await listed("Upcoming")).toEqual(["Plan trip"]);
    await openView("All");
    expect(await listed("All")).toEqual(["Pay rent", "File taxes", "Plan trip", "Read a book", "Water plants"]);
    await openView("Completed");
    expect(await page.getByRole("tabpanel").textContent()).toContain("No completed todos yet.");
    // The tabs follow the ARIA pattern: arrow keys move between views.
    await tab("Completed").press("ArrowLeft");
    expect(await tab("All").getAttribute("aria-selected")).toBe("true");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toMatch(/^All/);

    // The todos reached the server (all five: replication sends them one after another), and its own date
    // filters (in the same zone) agree with the views.
    await expect
      .poll(async () => (await serverTodos()).map((todo) => todo.title).sort(), PATIENCE)
      .toEqual(["File taxes", "Pay rent", "Plan trip", "Read a book", "Water plants"]);
    expect((await serverTodos({ date: "today" })).map((todo) => todo.title).sort()).toEqual(["Pay rent", "Water plants"]);
    expect((await serverTodos({ date: "overdue" })).map((todo) => todo.title)).toEqual(["File taxes"]);
    expect(await serverTodo("Pay rent")).toMatchObject({ priority: 1, dueDate: today(), completed: false, description: "" });
    expect(await serverTodo("Read a book")).toMatchObject({ priority: 4, dueDate: null });
  });

  it("completes and reopens a todo", async () => {
    await openView("All");
    // A click, not check(): the row leaves All once the pointer leaves the list, so there is no checked box to wait for.
    await row("Pay rent").getByRole("checkbox", { name: "Complete Pay rent" }).click();
    expect(await page.getByRole("status").filter({ hasText: "Completed" }).textContent()).toContain("Completed “Pay rent”Undo");
    await page.mouse.move(5, 5);
    await expect.poll(() => listed("All"), PATIENCE).toEqual(["File taxes", "Plan trip", "Read a book", "Water plants"]);
    expect(await counts()).toEqual(["Today 2", "Overdue 1", "Upcoming 1", "All 4", "Completed 1"]);
    // Today still lists it, done, below what is left to do.
    await openView("Today");
    expect(await listed("Today")).toEqual(["Water plants", "Pay rent"]);
    expect(await row("Pay rent").getByRole("checkbox").isChecked()).toBe(true);
    await expect.poll(async () => (await serverTodo("Pay rent"))?.completed, PATIENCE).toBe(true);
    const completedAt = (await serverTodo("Pay rent"))?.completedAt;
    expect(completedAt).toEqual(expect.any(String));

    await openView("Completed");
    expect(await listed("Completed")).toEqual(["Pay rent"]);
    await select("Pay rent");
    expect(await details("Pay rent").textContent()).toContain("Completed");
    await details("Pay rent").getByRole("button", { name: "Reopen" }).click();
    await expect.poll(() => page.getByRole("tabpanel").textContent()).toContain("No completed todos yet.");
    // The details stay open on the reopened todo, which can be completed from there too.
    await details("Pay rent").getByRole("button", { name: "Mark complete" }).waitFor();
    await expect.poll(async () => serverTodo("Pay rent"), PATIENCE).toMatchObject({ completed: false, completedAt: null });
    await details("Pay rent").getByRole("button", { name: "Close details" }).click();
    expect(await counts()).toEqual(["Today 2", "Overdue 1", "Upcoming 1", "All 5", "Completed 0"]);
  });

  it("completes one todo per double-click: the row stays under the pointer, and Undo reopens it", async () => {
    await openView("All");
    const before = await listed("All");
    const [first, second] = before;
    await row(first as string)
      .getByRole("checkbox", { name: `Complete ${first}` })
      .dblclick();
    // The completed row keeps its place while the pointer is on the list; the next one is untouched.
    expect(await listed("All")).toEqual(before);
    expect(
      await row(first as string)
        .getByRole("checkbox")
        .isChecked(),
    ).toBe(true);
    expect(
      await row(second as string)
        .getByRole("checkbox")
        .isChecked(),
    ).toBe(false);
    const toast = page.getByRole("status").filter({ hasText: "Undo" });
    expect(await toast.textContent()).toContain(`Completed “${first}”`);
    await expect.poll(async () => (await serverTodo(first as string))?.completed, PATIENCE).toBe(true);
    expect((await serverTodo(second as string))?.completed).toBe(false);
    await screenshot(page, "todos-undo");

    await toast.getByRole("button", { name: "Undo" }).click();
    await page.mouse.move(5, 5);
    await expect.poll(() => listed("All"), PATIENCE).toEqual(before);
    await expect.poll(async () => (await serverTodo(first as string))?.completed, PATIENCE).toBe(false);
  });

  it("adds, checks and removes steps", async () => {
    await openView("Upcoming");
    await select("Plan trip");
    const panel = details("Plan trip");
    for (const step of ["Book flights", "Pack"]) {
      await panel.getByLabel("New step").fill(step);
      await panel.getByRole("button", { name: "Add step" }).click();
      await panel.getByRole("checkbox", { name: step }).waitFor();
    }
    await panel.getByRole("checkbox", { name: "Book flights" }).check();
    await expect.poll(() => row("Plan trip").textContent()).toContain("1/2 steps");
    await panel.getByRole("button", { name: "Remove step Pack" }).click();
    await expect.poll(() => panel.getByRole("list", { name: "Steps" }).getByRole("listitem").count()).toBe(1);
    expect(await row("Plan trip").textContent()).toContain("1/1 steps");
    await expect.poll(async () => (await serverTodo("Plan trip"))?.steps, PATIENCE).toEqual([{ title: "Book flights", completed: true }]);
  });

  it("edits the title, description, due date and priority: they save themselves as they are typed", async () => {
    await openView("All");
    await select("Read a book");
    // The panel is named by the title, which changes as it saves: reach the form directly.
    const form = page.getByRole("form", { name: "Edit todo" });
    expect(await form.getByRole("button", { name: "Discard changes" }).isDisabled()).toBe(true);
    await form.getByLabel("Title").fill("Read two books");
    await form.getByLabel("Description").fill("One novel, one essay.");
    await form.getByLabel("Due date").fill(today());
    await form.getByLabel("Priority").selectOption("2");

    await details("Read two books").waitFor();
    await expect.poll(() => form.getByRole("status").textContent(), PATIENCE).toBe("Saved");
    expect(await listed("All")).toEqual(["Pay rent", "File taxes", "Read two books", "Plan trip", "Water plants"]);
    expect(await counts()).toEqual(["Today 3", "Overdue 1", "Upcoming 1", "All 5", "Completed 0"]);
    await expect
      .poll(async () => serverTodo("Read two books"), PATIENCE)
      .toMatchObject({ description: "One novel, one essay.", dueDate: today(), priority: 2 });

    // An empty title, one over the limit and a date out of range are refused with a message, never cut or stored.
    await form.getByLabel("Title").fill("   ");
    await expect.poll(() => form.getByRole("alert").textContent(), PATIENCE).toBe("A title is required.");
    await form.getByLabel("Title").fill("x".repeat(501));
    await expect.poll(() => form.getByRole("alert").textContent(), PATIENCE).toBe("A title has at most 500 characters (this one has 501).");
    expect(await form.getByLabel("Title").inputValue()).toHaveLength(501);
    await form.getByLabel("Title").fill("Read two books");
    await form.getByLabel("Due date").fill("2999-01-01");
    await expect
      .poll(() => form.getByRole("alert").textContent(), PATIENCE)
      .toBe("The due date must be between 1900-01-01 and 2199-12-31.");
    // "Discard changes" puts back what the todo was when it was opened.
    await form.getByRole("button", { name: "Discard changes" }).click();
    await details("Read a book").waitFor();
    await expect.poll(async () => serverTodo("Read a book"), PATIENCE).toMatchObject({ description: "", priority: 4, dueDate: null });
    // Back to the edited todo the next tests expect.
    await form.getByLabel("Title").fill("Read two books");
    await form.getByLabel("Description").fill("One novel, one essay.");
    await form.getByLabel("Due date").fill(today());
    await form.getByLabel("Priority").selectOption("2");
    await expect.poll(async () => serverTodo("Read two books"), PATIENCE).toMatchObject({ dueDate: today(), priority: 2 });
    await page.getByRole("button", { name: "Close details" }).click();
  });

  it("keeps a draft typed just before switching todo, view or section", async () => {
    await openView("All");
    await select("Read two books");
    const form = page.getByRole("form", { name: "Edit todo" });
    // Typed, and straight away another todo: no pause for the autosave.
    await form.getByLabel("Description").fill("Started chapter one");
    await row("Plan trip").getByRole("button", { name: "Plan trip", exact: true }).click();
    await details("Plan trip").waitFor();
    await form.getByLabel("Description").fill("Window seat");
    // Another view: the panel stays on the selected todo, and its draft is written meanwhile.
    await openView("Completed");
    await expect.poll(async () => (await serverTodo("Plan trip"))?.description, PATIENCE).toBe("Window seat");
    await openView("All");
    await select("File taxes");
    await form.getByLabel("Description").fill("Receipts in the blue folder");
    await openSection(page, "Notes");
    await openSection(page, "Todos");
    await page.getByRole("tablist", { name: "Todo views" }).waitFor();
    await expect.poll(async () => (await serverTodo("Read two books"))?.description, PATIENCE).toBe("Started chapter one");
    await expect.poll(async () => (await serverTodo("File taxes"))?.description, PATIENCE).toBe("Receipts in the blue folder");

    // A saved field changed on another device shows that change, and the open panel never writes its older draft back.
    await openView("All");
    await select("File taxes");
    await form.getByLabel("Description").fill("Receipts, twice");
    await expect.poll(async () => (await serverTodo("File taxes"))?.description, PATIENCE).toBe("Receipts, twice");
    const id = (await serverTodo("File taxes"))?.id as number;
    await user.client.call("updateTodo", { params: { id }, body: { description: "From the accountant" } });
    await expect.poll(() => form.getByLabel("Description").inputValue(), PATIENCE).toBe("From the accountant");
    await page.waitForTimeout(1500);
    expect((await serverTodo("File taxes"))?.description).toBe("From the accountant");
    await page.getByRole("button", { name: "Close details" }).click();
    await openView("Today");
  });

  it("deletes a todo at once, with an Undo that brings it back", async () => {
    await openView("Today");
    await select("Water plants");
    await details("Water plants").getByRole("button", { name: "Delete todo" }).click();
    await expect.poll(() => listed("Today")).not.toContain("Water plants");
    const toast = page.getByRole("status").filter({ hasText: "Undo" });
    expect(await toast.textContent()).toContain("Deleted “Water plants”");
    await toast.getByRole("button", { name: "Undo" }).click();
    await expect.poll(() => listed("Today")).toContain("Water plants");
    await expect.poll(async () => (await serverTodo("Water plants"))?.title, PATIENCE).toBe("Water plants");

    await select("Water plants");
    await details("Water plants").getByRole("button", { name: "Delete todo" }).click();
    await expect.poll(() => listed("Today")).toEqual(["Pay rent", "Read two books"]);
    expect(await details("Water plants").count()).toBe(0);
    await expect.poll(async () => serverTodo("Water plants"), PATIENCE).toBeUndefined();
  });

  it("shows a todo created through the REST API without a reload, and follows REST edits", async () => {
    await openView("Today");
    const created = await user.client.call("createTodo", {
      body: {
        title: "Call the plumber",
        dueDate: today(),
        priority: 1,
        description: "Before noon",
        steps: [{ title: "Find the number", completed: true }],
      },
    });
    await expect.poll(() => listed("Today"), PATIENCE).toEqual(["Pay rent", "Call the plumber", "Read two books"]);
    expect(await counts()).toEqual(["Today 3", "Overdue 1", "Upcoming 1", "All 5", "Completed 0"]);
    expect(await row("Call the plumber").textContent()).toContain("Before noon");
    expect(await row("Call the plumber").textContent()).toContain("1/1 steps");

    await user.client.call("completeTodo", { params: { id: created.result.todo.id } });
    await expect.poll(() => row("Call the plumber").getByRole("checkbox").isChecked(), PATIENCE).toBe(true);
    expect(await listed("Today")).toEqual(["Pay rent", "Read two books", "Call the plumber"]);
    expect(await counts()).toEqual(["Today 3", "Overdue 1", "Upcoming 1", "All 4", "Completed 1"]);
    expect(pageErrors).toEqual([]);
  });

  it("keeps the todos across a reload, and takes the screenshot", async () => {
    await page.reload();
    await openSection(page, "Todos");
    await openView("Today");
    await expect.poll(() => listed("Today"), PATIENCE).toEqual(["Pay rent", "Read two books", "Call the plumber"]);
    await select("Read two books");
    const panel = details("Read two books");
    await panel.getByLabel("New step").fill("Pick the novel");
    await panel.getByRole("button", { name: "Add step" }).click();
    await panel.getByRole("checkbox", { name: "Pick the novel" }).check();
    await panel.getByLabel("New step").fill("Pick the essay");
    await panel.getByRole("button", { name: "Add step" }).click();
    await panel.getByRole("checkbox", { name: "Pick the essay" }).waitFor();
    await screenshot(page, "todos");
    expect(pageErrors).toEqual([]);
  });
});
