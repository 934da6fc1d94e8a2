import { randomUUID } from "node:crypto";
import { putTodo, readTodos, type Todo, type TodoMeta, todayIn, todosDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

const ZONES = [
  "UTC",
  "Pacific/Kiritimati",
  "Pacific/Pago_Pago",
  "Asia/Kolkata",
  "America/St_Johns",
  "Europe/Berlin",
  "Australia/Lord_Howe",
  "America/Los_Angeles",
];
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];

/** A deterministic PRNG, so a failure can be reproduced. */
function prng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function shiftDate(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

describe("todos", () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
  });
  afterAll(() => t.stop());

  it("creates, reads, patches, completes idempotently, reopens and deletes", async () => {
    const created = await alice.client.raw("createTodo", {
      body: {
        title: "Write report",
        notes: "quarterly numbers",
        dueDate: "2026-12-01",
        priority: 2,
        steps: [{ title: "draft", completed: false }],
      },
    });
    expect(created.status).toBe(201);
    const { todo } = (created.body as { result: { todo: Todo } }).result;
    expect(todo).toMatchObject({
      title: "Write report",
      description: "quarterly numbers",
      dueDate: "2026-12-01",
      priority: 2,
      completed: false,
    });

    const patched = await alice.client.call("updateTodo", { params: { id: todo.id }, body: { title: "Write the report" } });
    expect(patched.result.todo).toMatchObject({
      title: "Write the report",
      description: "quarterly numbers",
      dueDate: "2026-12-01",
      priority: 2,
    });
    expect(patched.result.todo.steps).toEqual([{ title: "draft", completed: false }]);
    const cleared = await alice.client.call("updateTodo", { params: { id: todo.id }, body: { dueDate: null, priority: null } });
    expect(cleared.result.todo).toMatchObject({ dueDate: null, priority: null, title: "Write the report" });

    const done = await alice.client.call("completeTodo", { params: { id: todo.id } });
    expect(done.result.todo.completed).toBe(true);
    const again = await alice.client.call("completeTodo", { params: { id: todo.id } });
    expect(again.result.todo.completedAt).toBe(done.result.todo.completedAt);
    const reopened = await alice.client.call("reopenTodo", { params: { id: todo.id } });
    expect(reopened.result.todo).toMatchObject({ completed: false, completedAt: null });

    expect((await bob.client.raw("getTodo", { params: { id: todo.id } })).status).toBe(404);
    expect((await bob.client.raw("completeTodo", { params: { id: todo.id } })).status).toBe(404);
    await alice.client.call("deleteTodo", { params: { id: todo.id } });
    expect((await alice.client.raw("getTodo", { params: { id: todo.id } })).status).toBe(404);
    expect((await alice.client.raw("deleteTodo", { params: { id: todo.id } })).status).toBe(404);
  });

  it.each([
    ["a missing title", { priority: 1 }, "body.title"],
    ["an empty title", { title: " " }, "body.title"],
    ["priority 5", { title: "x", priority: 5 }, "body.priority"],
    ["priority 1.5", { title: "x", priority: 1.5 }, "body.priority"],
    ["February 30th", { title: "x", dueDate: "2026-02-30" }, "body.dueDate"],
    ["a word as a date", { title: "x", dueDate: "tomorrow" }, "body.dueDate"],
    ["a date in year 2999", { title: "x", dueDate: "2999-01-01" }, "between 1900-01-01 and 2199-12-31"],
    ["a date in year 0202", { title: "x", dueDate: "0202-01-01" }, "body.dueDate"],
    ["a title over 500 characters", { title: "x".repeat(501) }, "body.title"],
    ["steps that are not a list", { title: "x", steps: "do it" }, "body.steps"],
  ])("answers %s with 422 naming the field", async (_, body, field) => {
    const response = await t.fetch("/api/v1/os/todos", {
      method: "POST",
      headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { message: string }).message).toContain(field);
  });

  it.each([["timezone=Mars/Olympus"], ["date=yesterday"], ["limit=201"], ["priority=0"], ["completed=maybe"], ["sort=title"]])(
    "answers the query %s with 400",
    async (query) => {
      const response = await t.fetch(`/api/v1/os/todos?${query}`, { headers: { authorization: `Bearer ${alice.apiKey}` } });
      expect(response.status).toBe(400);
    },
  );

  it("filters exactly like a brute-force filter over 2,000 random todos", async () => {
    const carol = await t.addUser("carol");
    const random = prng(20261122);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
    const utcToday = todayIn("UTC");
    const seeded = new Map<string, TodoMeta>();
    for (let i = 0; i < 2000; i++) {
      const completed = random() < 0.3;
      const created = new Date(Date.UTC(2026, 0, 1) + Math.floor(random() * 300 * 86_400_000)).toISOString();
      seeded.set(randomUUID(), {
        title: `${pick(WORDS)} ${pick(WORDS)} task ${i}`,
        description: random() < 0.5 ? `${pick(WORDS)} notes` : "",
        dueDate: random() < 0.15 ? null : shiftDate(utcToday, Math.floor(random() * 7) - 3),
        priority: random() < 0.2 ? null : 1 + Math.floor(random() * 4),
        completed,
        completedAt: completed ? created : null,
        steps: [],
        createdAt: created,
        updatedAt: created,
      });
    }
    await t.server.context.sync.change(todosDocName(carol.userId), carol.userId, (doc) => {
      for (const [uuid, todo] of seeded) putTodo(doc, uuid, todo);
    });

    // The server's ids, by uuid, from paging through everything.
    const idOf = new Map<string, number>();
    for (let offset = 0; offset < 2000; offset += 200) {
      const page = await carol.client.call("listTodos", { query: { limit: 200, offset, sort: "createdAt" } });
      for (const todo of page.result.todos) idOf.set(todo.uuid, todo.id);
    }
    expect(idOf.size).toBe(2000);
    const all = [...seeded].map(([uuid, todo]) => ({ ...todo, uuid, id: idOf.get(uuid) as number }));
    const column = { dueDate: "dueDate", priority: "priority", createdAt: "createdAt", updatedAt: "updatedAt" } as const;

    for (let round = 0; round < 60; round++) {
      const query = {
        q: random() < 0.3 ? pick(WORDS) : undefined,
        date: random() < 0.5 ? pick(["today", "overdue", "upcoming", shiftDate(utcToday, Math.floor(random() * 5) - 2)]) : undefined,
        timezone: pick(ZONES),
        completed: random() < 0.4 ? random() < 0.5 : undefined,
        priority: random() < 0.2 ? 1 + Math.floor(random() * 4) : undefined,
        priorityMin: random() < 0.2 ? 1 + Math.floor(random() * 4) : undefined,
        sort: pick(["dueDate", "priority", "createdAt", "updatedAt"] as const),
        order: pick(["asc", "desc"] as const),
        limit: 1 + Math.floor(random() * 200),
        offset: Math.floor(random() * 50),
      };
      const today = todayIn(query.timezone);
      const answer = await carol.client.call("listTodos", { query });
      if (todayIn(query.timezone) !== today) continue; // the day turned during the request
      const expected = all
        .filter((todo) => !query.q || `${todo.title}\n${todo.description}`.toLowerCase().includes(query.q))
        .filter((todo) => {
          if (query.date === undefined) return true;
          if (todo.dueDate === null) return false;
          if (query.date === "today") return todo.dueDate === today;
          if (query.date === "overdue") return todo.dueDate < today && !todo.completed;
          if (query.date === "upcoming") return todo.dueDate > today;
          return todo.dueDate === query.date;
        })
        .filter((todo) => query.completed === undefined || todo.completed === query.completed)
        .filter((todo) => query.priority === undefined || todo.priority === query.priority)
        .filter((todo) => query.priorityMin === undefined || (todo.priority !== null && todo.priority <= query.priorityMin))
        .sort((a, b) => {
          const [x, y] = [a[column[query.sort]], b[column[query.sort]]];
          if ((x === null) !== (y === null)) return x === null ? 1 : -1;
          const direction = query.order === "asc" ? 1 : -1;
          if (x !== y && x !== null && y !== null) return (x < y ? -1 : 1) * direction;
          return (a.id - b.id) * direction;
        });
      expect(answer.result.total, JSON.stringify(query)).toBe(expected.length);
      expect(
        answer.result.todos.map((todo) => todo.id),
        JSON.stringify(query),
      ).toEqual(expected.slice(query.offset, query.offset + query.limit).map((todo) => todo.id));
    }
  });

  it("replans overdue open todos to today in the caller's time zone, most important first", async () => {
    const dave = await t.addUser("dave");
    // Pago Pago (UTC-11) and Kiritimati (UTC+14) are always on different dates.
    const behind = todayIn("Pacific/Pago_Pago");
    const ahead = todayIn("Pacific/Kiritimati");
    const ids: Record<string, number> = {};
    for (const [name, priority] of [
      ["low", 3],
      ["urgent", 1],
      ["someday", null],
      ["high", 2],
    ] as const) {
      ids[name] = (await dave.client.call("createTodo", { body: { title: name, dueDate: behind, priority } })).result.todo.id;
    }
    const done = (await dave.client.call("createTodo", { body: { title: "done", dueDate: shiftDate(behind, -1) } })).result.todo.id;
    await dave.client.call("completeTodo", { params: { id: done } });

    const nothing = await dave.client.call("replanTodos", { body: { timezone: "Pacific/Pago_Pago" } });
    expect(nothing.moved).toEqual([]);
    const moved = await dave.client.call("replanTodos", { body: { timezone: "Pacific/Kiritimati" } });
    expect(moved.today).toBe(ahead);
    expect(moved.moved.map((todo) => todo.title)).toEqual(["urgent", "high", "low", "someday"]);
    expect(moved.moved.every((todo) => todo.dueDate === ahead)).toBe(true);
    expect((await dave.client.call("getTodo", { params: { id: done } })).result.todo.dueDate).toBe(shiftDate(behind, -1));
    const empty = await dave.client.raw("replanTodos", { body: {} });
    expect(empty.status).toBe(200);
  });

  it("merges a provider's offline edits with concurrent REST edits, and sync edits reach REST", async () => {
    const erin = await t.addUser("erin");
    const first = (await erin.client.call("createTodo", { body: { title: "first" } })).result.todo;
    const second = (await erin.client.call("createTodo", { body: { title: "second" } })).result.todo;
    const client = await openDoc(t.server.syncUrl, erin.apiKey, todosDocName(erin.userId));
    try {
      expect(readTodos(client.doc).get(first.uuid)?.title).toBe("first");
      client.socket.disconnect();
      const offlineUuid = randomUUID();
      client.doc.transact(() => {
        putTodo(client.doc, first.uuid, { title: "first, edited offline", updatedAt: new Date().toISOString() });
        putTodo(client.doc, offlineUuid, {
          title: "made offline",
          createdAt: new Date().toISOString(),
          updatedAt: new Date().toISOString(),
        });
      });
      await erin.client.call("updateTodo", { params: { id: second.id }, body: { title: "second, edited over REST" } });
      await erin.client.call("createTodo", { body: { title: "made over REST" } });
      await client.socket.connect();

      const titles = ["first, edited offline", "made offline", "second, edited over REST", "made over REST"];
      await expect.poll(() => [...readTodos(client.doc).values()].map((todo) => todo.title).sort()).toEqual([...titles].sort());
      await expect
        .poll(
          async () => (await erin.client.call("listTodos", { query: { sort: "createdAt" } })).result.todos.map((todo) => todo.title).sort(),
          {
            timeout: 1000,
          },
        )
        .toEqual([...titles].sort());
    } finally {
      client.close();
    }
  });
});
