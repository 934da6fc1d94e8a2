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

    // The todos reached the server, and its own date filters (in the same zone) agree with the views.
    await expect
      .poll(async () => (await serverTodos({ date: "today" })).map((todo) => todo.title).sort(), PATIENCE)
      .toEqual(["Pay rent", "Water plants"]);
    expect((await serverTodos({ date: "overdue" })).map((todo) => todo.title)).toEqual(["File taxes"]);
    expect(await serverTodo("Pay rent")).toMatchObject({ priority: 1, dueDate: today(), completed: false, description: "" });
    expect(await serverTodo("Read a book")).toMatchObject({ priority: 4, dueDate: null });
  });

  it("completes and reopens a todo", async () => {
    await openView("All");
    // A click, not check(): the row leaves All as soon as the todo is done, so there is no checked box to wait for.
    await row("Pay rent").getByRole("checkbox", { name: "Complete Pay rent" }).click();
    await expect.poll(() => listed("All")).toEqual(["File taxes", "Plan trip", "Read a book", "Water plants"]);
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

  it("edits the title, description, due date and priority", async () => {
    await openView("All");
    await select("Read a book");
    const form = details("Read a book").getByRole("form", { name: "Edit todo" });
    expect(await form.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await form.getByLabel("Title").fill("Read two books");
    await form.getByLabel("Description").fill("One novel, one essay.");
    await form.getByLabel("Due date").fill(today());
    await form.getByLabel("Priority").selectOption("2");
    await form.getByRole("button", { name: "Save" }).click();

    await details("Read two books").waitFor();
    expect(await listed("All")).toEqual(["Pay rent", "File taxes", "Read two books", "Plan trip", "Water plants"]);
    expect(await counts()).toEqual(["Today 3", "Overdue 1", "Upcoming 1", "All 5", "Completed 0"]);
    await expect
      .poll(async () => serverTodo("Read two books"), PATIENCE)
      .toMatchObject({ description: "One novel, one essay.", dueDate: today(), priority: 2 });

    // An empty title is refused, and Revert brings back the saved one.
    const edit = details("Read two books").getByRole("form", { name: "Edit todo" });
    await edit.getByLabel("Title").fill("   ");
    await edit.getByRole("button", { name: "Save" }).click();
    expect(await edit.getByRole("alert").textContent()).toBe("A title is required.");
    await edit.getByRole("button", { name: "Revert" }).click();
    expect(await edit.getByLabel("Title").inputValue()).toBe("Read two books");
  });

  it("deletes a todo only once confirmed", async () => {
    await openView("Today");
    await select("Water plants");
    await details("Water plants").getByRole("button", { name: "Delete todo" }).click();
    const question = page.getByRole("alertdialog");
    expect(await question.textContent()).toContain("Delete “Water plants”?");
    await question.getByRole("button", { name: "Cancel" }).click();
    expect(await listed("Today")).toContain("Water plants");

    await details("Water plants").getByRole("button", { name: "Delete todo" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Delete todo" }).click();
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
