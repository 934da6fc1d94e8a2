import { putTodo, readTodos, type TodoMeta } from "@tandem/core/documents";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import {
  addStep,
  createTodo,
  deleteTodo,
  removeStep,
  restoreTodo,
  setStepCompleted,
  setTodoCompleted,
  TITLE_MAX_LENGTH,
  updateTodo,
} from "../src/renderer/todos/todo-actions";
import { daysBetween, formatDueDate, priorityDescription } from "../src/renderer/todos/todo-format";
import { countViews, holdPositions, type TodoItem, todosInView } from "../src/renderer/todos/todo-lists";

const TODAY = "2026-03-10";
const T0 = new Date("2026-03-10T08:00:00.000Z");
const T1 = new Date("2026-03-10T09:30:00.000Z");

function todo(uuid: string, fields: Partial<TodoMeta>): TodoItem {
  return {
    uuid,
    title: uuid,
    description: "",
    dueDate: null,
    priority: null,
    completed: false,
    completedAt: null,
    steps: [],
    createdAt: "2026-03-01T00:00:00.000Z",
    updatedAt: "2026-03-01T00:00:00.000Z",
    ...fields,
  };
}

describe("todo views", () => {
  const todos = [
    todo("due-today", { dueDate: TODAY }),
    todo("done-today", { dueDate: TODAY, completed: true }),
    todo("late", { dueDate: "2026-03-09" }),
    todo("done-late", { dueDate: "2026-03-01", completed: true }),
    todo("next-week", { dueDate: "2026-03-17" }),
    todo("someday", {}),
    todo("done-someday", { completed: true }),
  ];
  const names = (view: Parameters<typeof todosInView>[1]) => todosInView(todos, view, TODAY).map((t) => t.uuid);

  it("follow the server's date filters: overdue leaves completed todos out, today and upcoming keep them", () => {
    expect(names("today")).toEqual(["due-today", "done-today"]);
    expect(names("overdue")).toEqual(["late"]);
    expect(names("upcoming")).toEqual(["next-week"]);
    expect(names("all").sort()).toEqual(["due-today", "late", "next-week", "someday"]);
    expect(names("completed").sort()).toEqual(["done-late", "done-someday", "done-today"]);
  });

  it("count what each view lists", () => {
    expect(countViews(todos, TODAY)).toEqual({ today: 2, overdue: 1, upcoming: 1, all: 4, completed: 3 });
  });

  it("sort open before completed, then by priority, due date and creation, empty values last", () => {
    const sorted = todosInView(
      [
        todo("no-priority", { dueDate: "2026-03-11" }),
        todo("p2-later", { priority: 2, dueDate: "2026-03-20" }),
        todo("p2-sooner-newer", { priority: 2, dueDate: "2026-03-12", createdAt: "2026-03-05T00:00:00.000Z" }),
        todo("p2-sooner-older", { priority: 2, dueDate: "2026-03-12", createdAt: "2026-03-02T00:00:00.000Z" }),
        todo("p2-undated", { priority: 2 }),
        todo("p1-done", { priority: 1, completed: true }),
        todo("p4", { priority: 4, dueDate: "2026-03-11" }),
        todo("p1", { priority: 1, dueDate: "2026-04-01" }),
      ],
      "all",
      TODAY,
    ).map((t) => t.uuid);
    expect(sorted).toEqual(["p1", "p2-sooner-older", "p2-sooner-newer", "p2-later", "p2-undated", "p4", "no-priority"]);
    const mixed = todosInView(
      [todo("p1-done", { priority: 1, completed: true, dueDate: TODAY }), todo("p3", { priority: 3, dueDate: TODAY })],
      "today",
      TODAY,
    );
    expect(mixed.map((t) => t.uuid)).toEqual(["p3", "p1-done"]);
  });
});

describe("todo actions on the document", () => {
  it("create a todo with every field the REST API sets", () => {
    const doc = new Y.Doc();
    const uuid = createTodo(doc, { title: "  Buy milk  ", dueDate: TODAY, priority: 2 }, T0);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(readTodos(doc).get(uuid)).toEqual({
      title: "Buy milk",
      description: "",
      dueDate: TODAY,
      priority: 2,
      completed: false,
      completedAt: null,
      steps: [],
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
    });
  });

  it("refuse an empty or overlong title", () => {
    const doc = new Y.Doc();
    expect(() => createTodo(doc, { title: "   ", dueDate: null, priority: null })).toThrow("A title is required.");
    expect(() => createTodo(doc, { title: "x".repeat(TITLE_MAX_LENGTH + 1), dueDate: null, priority: null })).toThrow(/at most 500/);
    expect(readTodos(doc).size).toBe(0);
  });

  it("edit only the given fields and stamp updatedAt", () => {
    const doc = new Y.Doc();
    const uuid = createTodo(doc, { title: "Draft", dueDate: TODAY, priority: 3 }, T0);
    expect(updateTodo(doc, uuid, { title: "Final", description: "details", dueDate: null }, T1)).toBe(true);
    expect(readTodos(doc).get(uuid)).toMatchObject({
      title: "Final",
      description: "details",
      dueDate: null,
      priority: 3,
      createdAt: T0.toISOString(),
      updatedAt: T1.toISOString(),
    });
  });

  it("refuse a due date out of range and a title over the limit, with a message", () => {
    const doc = new Y.Doc();
    expect(() => createTodo(doc, { title: "Typo", dueDate: "20260-01-01", priority: null })).toThrow(
      "The due date must be a date YYYY-MM-DD.",
    );
    expect(() => createTodo(doc, { title: "Typo", dueDate: "0202-01-01", priority: null })).toThrow(
      "The due date must be between 1900-01-01 and 2199-12-31.",
    );
    const uuid = createTodo(doc, { title: "Fine", dueDate: "2199-12-31", priority: null });
    expect(() => updateTodo(doc, uuid, { title: "x".repeat(501) })).toThrow("A title has at most 500 characters (this one has 501).");
    expect(readTodos(doc).get(uuid)?.title).toBe("Fine");
  });

  it("undo a deletion: the todo comes back as it was", () => {
    const doc = new Y.Doc();
    const uuid = createTodo(doc, { title: "Back again", dueDate: "2026-03-17", priority: 2 }, T0);
    addStep(doc, uuid, "one", T0);
    const deleted = deleteTodo(doc, uuid);
    expect(readTodos(doc).has(uuid)).toBe(false);
    restoreTodo(doc, uuid, deleted as TodoMeta, T1);
    expect(readTodos(doc).get(uuid)).toMatchObject({ title: "Back again", priority: 2, steps: [{ title: "one", completed: false }] });
  });

  it("never bring back a todo deleted meanwhile", () => {
    const doc = new Y.Doc();
    const uuid = createTodo(doc, { title: "Gone soon", dueDate: null, priority: null }, T0);
    deleteTodo(doc, uuid);
    expect(updateTodo(doc, uuid, { title: "Edited" }, T1)).toBe(false);
    expect(setTodoCompleted(doc, uuid, true, T1)).toBe(false);
    expect(addStep(doc, uuid, "step", T1)).toBe(false);
    expect(readTodos(doc).has(uuid)).toBe(false);
  });

  it("complete with a timestamp, reopen clearing it; repeating either changes nothing", () => {
    const doc = new Y.Doc();
    const uuid = createTodo(doc, { title: "Ship", dueDate: null, priority: null }, T0);
    expect(setTodoCompleted(doc, uuid, true, T1)).toBe(true);
    expect(readTodos(doc).get(uuid)).toMatchObject({ completed: true, completedAt: T1.toISOString(), updatedAt: T1.toISOString() });
    expect(setTodoCompleted(doc, uuid, true, new Date("2026-03-11T00:00:00.000Z"))).toBe(false);
    expect(readTodos(doc).get(uuid)?.completedAt).toBe(T1.toISOString());
    expect(setTodoCompleted(doc, uuid, false, T1)).toBe(true);
    expect(readTodos(doc).get(uuid)).toMatchObject({ completed: false, completedAt: null });
  });

  it("add, check and remove steps, finding a step by title when another client moved it", () => {
    const doc = new Y.Doc();
    const uuid = createTodo(doc, { title: "Trip", dueDate: null, priority: null }, T0);
    addStep(doc, uuid, "Book hotel", T0);
    addStep(doc, uuid, "Pack", T0);
    expect(() => addStep(doc, uuid, " ", T0)).toThrow("A title is required.");
    expect(setStepCompleted(doc, uuid, { index: 1, title: "Pack" }, true, T1)).toBe(true);
    expect(readTodos(doc).get(uuid)?.steps).toEqual([
      { title: "Book hotel", completed: false },
      { title: "Pack", completed: true },
    ]);
    // Another device removes the first step; the view still shows "Pack" at index 1.
    doc.transact(() => putTodo(doc, uuid, { steps: [{ title: "Pack", completed: true }] }));
    expect(setStepCompleted(doc, uuid, { index: 1, title: "Pack" }, false, T1)).toBe(true);
    expect(readTodos(doc).get(uuid)?.steps).toEqual([{ title: "Pack", completed: false }]);
    expect(removeStep(doc, uuid, { index: 0, title: "Gone" }, T1)).toBe(false);
    expect(removeStep(doc, uuid, { index: 0, title: "Pack" }, T1)).toBe(true);
    expect(readTodos(doc).get(uuid)?.steps).toEqual([]);
  });
});

describe("todo formatting", () => {
  it("names nearby days and formats the others as calendar dates", () => {
    expect(daysBetween("2026-03-28", "2026-03-30")).toBe(2); // across a DST change in Europe
    expect(formatDueDate(TODAY, TODAY, "en-US")).toBe("Today");
    expect(formatDueDate("2026-03-11", TODAY, "en-US")).toBe("Tomorrow");
    expect(formatDueDate("2026-03-09", TODAY, "en-US")).toBe("Yesterday");
    expect(formatDueDate("2026-03-17", TODAY, "en-US")).toBe("Tue, Mar 17");
    expect(formatDueDate("2027-01-05", TODAY, "en-US")).toBe("Tue, Jan 5, 2027");
    expect(priorityDescription(1)).toBe("P1 (highest)");
    expect(priorityDescription(null)).toBe("No priority");
  });
});

describe("rows held in place", () => {
  it("keeps a just-completed row where it was, even when its view no longer lists it", () => {
    const a = todo("a", { title: "A" });
    const b = todo("b", { title: "B" });
    const c = todo("c", { title: "C", completed: true });
    // c was at index 0 when it was completed; the view (All: open only) now lists a and b.
    expect(holdPositions([a, b], [a, b, c], new Map([["c", 0]])).map((t) => t.uuid)).toEqual(["c", "a", "b"]);
    // Held rows that moved within the list stay put too; unknown or deleted ones are skipped.
    expect(
      holdPositions(
        [b, a],
        [a, b],
        new Map([
          ["a", 0],
          ["gone", 1],
        ]),
      ).map((t) => t.uuid),
    ).toEqual(["a", "b"]);
    expect(holdPositions([a, b], [a, b], new Map()).map((t) => t.uuid)).toEqual(["a", "b"]);
  });
});
