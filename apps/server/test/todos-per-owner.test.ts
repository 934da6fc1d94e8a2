import { randomUUID } from "node:crypto";
import { putTodo, type Todo, type TodoMeta, todosDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as Y from "yjs";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

/** Long enough for a loaded machine; nothing here measures time. */
const PATIENCE = { timeout: 20_000, interval: 100 };

function todoFields(title: string, dueDate: string | null = null): TodoMeta {
  const now = new Date().toISOString();
  return {
    title,
    description: "",
    dueDate,
    priority: null,
    completed: false,
    completedAt: null,
    steps: [],
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * A todo uuid means something only inside its owner's todos document: the same uuid written into
 * another user's document is a different todo, and neither collides with nor reaches the other.
 */
describe.each(storages("todos per owner"))("todos per owner (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  /** Changes a user's document over a real socket, as their client would, and waits for the server to take it. */
  async function writeOverSync(user: TestUser, change: (doc: Y.Doc) => void): Promise<void> {
    const synced = await openDoc(t.server.syncUrl, user.apiKey, todosDocName(user.userId));
    try {
      expect(synced.outcome).toBe("synced");
      synced.doc.transact(() => change(synced.doc));
      await expect.poll(() => synced.provider.unsyncedChanges, PATIENCE).toBe(0);
    } finally {
      synced.close();
    }
  }

  async function listed(user: TestUser): Promise<Todo[]> {
    return (await user.client.call("listTodos", { query: { limit: 200 } })).result.todos;
  }

  /** Waits until the user's todos view lists the uuid, and answers that todo. */
  async function listedTodo(user: TestUser, uuid: string): Promise<Todo> {
    await expect.poll(async () => (await listed(user)).map((todo) => todo.uuid), PATIENCE).toContain(uuid);
    const todo = (await listed(user)).find((candidate) => candidate.uuid === uuid);
    if (!todo) throw new Error(`todo ${uuid} is not listed`);
    return todo;
  }

  /** The owner's REST writes reach their own todo, never the other user's one with the same uuid. */
  async function expectOwnWrites(user: TestUser, todo: Todo, title: string): Promise<void> {
    const patched = await user.client.call("updateTodo", { params: { id: todo.id }, body: { title } });
    expect(patched.result.todo).toMatchObject({ id: todo.id, uuid: todo.uuid, title });
    const done = await user.client.call("completeTodo", { params: { id: todo.id } });
    expect(done.result.todo).toMatchObject({ id: todo.id, title, completed: true });
  }

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
  });
  afterAll(() => t.stop());

  it("another user's todo uuid written into one's own todos document is one's own todo, and leaves theirs alone", async () => {
    const created = (await alice.client.call("createTodo", { body: { title: "alice's plan" } })).result.todo;
    await writeOverSync(bob, (doc) => putTodo(doc, created.uuid, todoFields("bob's copy")));

    const bobs = await listedTodo(bob, created.uuid);
    expect(bobs.title).toBe("bob's copy");
    expect(bobs.id).not.toBe(created.id);
    expect((await listed(alice)).map((todo) => [todo.uuid, todo.title])).toEqual([[created.uuid, "alice's plan"]]);
    expect((await bob.client.raw("getTodo", { params: { id: created.id } })).status).toBe(404);

    await expectOwnWrites(alice, created, "alice's plan, revised");
    await expectOwnWrites(bob, bobs, "bob's copy, revised");
    expect((await listed(alice)).map((todo) => todo.title)).toEqual(["alice's plan, revised"]);
    expect((await listed(bob)).map((todo) => todo.title)).toEqual(["bob's copy, revised"]);
  });

  it("a uuid another user wrote first does not keep one's own todo out, and replanning reads only one's own", async () => {
    const carol = await t.addUser("carol");
    const dave = await t.addUser("dave");
    const uuid = randomUUID();
    await writeOverSync(dave, (doc) => putTodo(doc, uuid, todoFields("dave's first", "2001-01-01")));
    await listedTodo(dave, uuid);
    await writeOverSync(carol, (doc) => putTodo(doc, uuid, todoFields("carol's second", "2001-01-01")));

    const carols = await listedTodo(carol, uuid);
    expect(carols.title).toBe("carol's second");
    expect((await listed(carol)).map((todo) => todo.title)).toEqual(["carol's second"]);
    expect((await listed(dave)).map((todo) => todo.title)).toEqual(["dave's first"]);

    const replanned = await carol.client.call("replanTodos", { body: { timezone: "UTC" } });
    expect(replanned.moved.map((todo) => [todo.id, todo.title])).toEqual([[carols.id, "carol's second"]]);
    expect((await listed(dave)).map((todo) => todo.dueDate)).toEqual(["2001-01-01"]);

    await expectOwnWrites(carol, carols, "carol's, revised");
    expect((await listed(dave)).map((todo) => todo.title)).toEqual(["dave's first"]);
  });
});
