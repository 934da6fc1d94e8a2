import { ALL_SCOPES, type Scope } from "@tandem/core";
import { generateText, isStepCount } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalModel } from "../src/agent/models/local/local-model";
import { ModelCatalog } from "../src/agent/models/model-catalog";
import type { ToolRunContext } from "../src/agent/tools/agent-tool";
import { findTool, NATIVE_TOOLS, toolsetFor } from "../src/agent/tools/registry";
import { CUT_MARK, capResult, MAX_RESULT_BYTES } from "../src/agent/tools/result-cap";
import { ownerGrant, type RunGrant } from "../src/agent/tools/run-grant";
import { executeTool, inputJsonSchema, ToolFailure, toAiToolSet, UNEXPECTED_FAILURE } from "../src/agent/tools/to-ai-tools";
import { SQLITE_ONLY } from "./delegation-fixture";
import { startFakeOpenAI } from "./fakes/fake-openai";
import { startTestServer, type TestServer, type TestUser } from "./harness";

// biome-ignore lint/suspicious/noExplicitAny: tool results are checked by shape below
type Json = any;

const dayFromToday = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

describe.each(SQLITE_ONLY)("agent tools (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const folders: Record<"a" | "sub" | "b" | "memorySelf" | "bobShared", number> = { a: 0, sub: 0, b: 0, memorySelf: 0, bobShared: 0 };
  const notes: Record<"a" | "sub" | "b" | "root" | "trashed" | "user" | "bob" | "bobShared", number> = {
    a: 0,
    sub: 0,
    b: 0,
    root: 0,
    trashed: 0,
    user: 0,
    bob: 0,
    bobShared: 0,
  };
  const todos: Record<"yesterday" | "today" | "nextWeek", number> = { yesterday: 0, today: 0, nextWeek: 0 };
  let owner: RunGrant;
  /** A contact's run that may see folder A (and A/Sub, below it) and nothing else, with every scope. */
  let onlyA: RunGrant;

  const context = (grant: RunGrant): ToolRunContext => ({
    app: t.server.context,
    grant,
    timezone: "UTC",
    signal: new AbortController().signal,
  });

  async function run(grant: RunGrant, name: string, args: Record<string, unknown> = {}): Promise<Json> {
    const tool = findTool(name);
    if (!tool) throw new Error(`no tool ${name}`);
    return executeTool(tool, args, context(grant));
  }

  /** The message of the tool failure a call ends in. */
  async function failure(grant: RunGrant, name: string, args: Record<string, unknown> = {}): Promise<string> {
    const error = await run(grant, name, args).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ToolFailure);
    return (error as Error).message;
  }

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
    await bob.client.call("init");
    const folder = async (user: TestUser, path: string) => (await user.client.call("createFolder", { body: { path } })).folder.id;
    const note = async (user: TestUser, title: string, content: string, folderId?: number) =>
      (await user.client.call("createNote", { body: { title, content, folderId } })).result.note.id;

    folders.a = await folder(alice, "A");
    folders.sub = await folder(alice, "A/Sub");
    folders.b = await folder(alice, "B");
    folders.memorySelf = await folder(alice, "Memory/Self");
    notes.a = await note(alice, "Alpha plan", "# Plan\n\nThe zebra migrates in spring.\n\nshared-word alpha", folders.a);
    notes.sub = await note(alice, "Sub detail", "zebra details\n\nshared-word sub", folders.sub);
    notes.b = await note(alice, "Bravo secret", "The yak crosses the river.\n\nshared-word bravo onlyinbee", folders.b);
    notes.root = await note(alice, "Root note", "walrus at the root\n\nshared-word root");
    notes.trashed = await note(alice, "Trashed thing", "kangaroo in the trash, shared-word", folders.a);
    await alice.client.call("trashNote", { params: { id: notes.trashed } });
    notes.user = await note(alice, "USER", "## Goals\n\n- run a marathon\n\n## Likes\n\n- green tea", folders.memorySelf);

    notes.bob = await note(bob, "Bob private", "kangaroo of bob, shared-word");
    folders.bobShared = await folder(bob, "BobShared");
    notes.bobShared = await note(bob, "Bob shared note", "quokka shared with alice", folders.bobShared);
    await bob.client.call("shareFolder", { params: { id: folders.bobShared }, body: { username: "alice", role: "viewer" } });

    const todo = async (title: string, dueDate: string) =>
      (await alice.client.call("createTodo", { body: { title, dueDate } })).result.todo.id;
    todos.yesterday = await todo("Pay rent", dayFromToday(-1));
    todos.today = await todo("Call mum", dayFromToday(0));
    todos.nextWeek = await todo("Book trip", dayFromToday(7));

    const { requestId } = await alice.client.call("networkRequest", { body: { to: "bob" } });
    await bob.client.call("networkAccept", { body: { requestId, type: "friend", action: "accept" } });

    owner = ownerGrant(alice.userId, new Set(ALL_SCOPES), null);
    onlyA = {
      ownerId: alice.userId,
      caller: { kind: "contact", userId: bob.userId, label: "bob" },
      scopes: new Set(ALL_SCOPES),
      folders: new Set([folders.a, folders.sub]),
    };
  });
  afterAll(() => t.stop());

  describe("the owner's own run", () => {
    it("searches notes, own and shared, never trashed ones, with the result shape models see", async () => {
      const { results } = await run(owner, "search_notes", { query: "zebra" });
      expect(results.map((r: Json) => r.id).sort()).toEqual([notes.a, notes.sub].sort());
      for (const result of results) expect(Object.keys(result).sort()).toEqual(["folderId", "id", "snippet", "title"]);
      expect(results.find((r: Json) => r.id === notes.a)).toMatchObject({ title: "Alpha plan", folderId: folders.a });

      const inA = await run(owner, "search_notes", { query: "shared", folderName: "a" });
      expect(inA.results.map((r: Json) => r.id).sort()).toEqual([notes.a, notes.sub].sort());
      expect((await run(owner, "search_notes", { query: "quokka" })).results.map((r: Json) => r.id)).toEqual([notes.bobShared]);
      expect((await run(owner, "search_notes", { query: "kangaroo" })).results).toEqual([]);
    });

    it("greps literally and by regex, each match as a line number and its text", async () => {
      const { results } = await run(owner, "grep_notes", { pattern: "SHARED-WORD" });
      expect(results.map((r: Json) => r.noteId).sort()).toEqual([notes.a, notes.sub, notes.b, notes.root].sort());
      const alpha = results.find((r: Json) => r.noteId === notes.a);
      expect(alpha).toEqual({ noteId: notes.a, title: "Alpha plan", matches: [{ line: 3, text: "shared-word alpha" }] });

      const regex = await run(owner, "grep_notes", { pattern: "ya+k\\b", mode: "regex" });
      expect(regex.results.map((r: Json) => r.noteId)).toEqual([notes.b]);
      expect(await failure(owner, "grep_notes", { pattern: "(", mode: "regex" })).toMatch(/pattern/);
      const inB = await run(owner, "grep_notes", { pattern: "shared-word", folderName: "B" });
      expect(inB.results.map((r: Json) => r.noteId)).toEqual([notes.b]);
    });

    it("reads a note as Markdown, lists notes and folders", async () => {
      const note = await run(owner, "get_note_content", { noteId: notes.a });
      expect(Object.keys(note).sort()).toEqual(["folderId", "id", "markdown", "title", "updatedAt"]);
      expect(note).toMatchObject({ id: notes.a, title: "Alpha plan", folderId: folders.a });
      expect(note.markdown).toContain("# Plan");
      expect(note.markdown).toContain("The zebra migrates in spring.");

      const root = await run(owner, "list_notes");
      expect(root.notes.map((n: Json) => n.id)).toEqual([notes.root]);
      expect(Object.keys(root.notes[0]).sort()).toEqual(["folderId", "id", "pinned", "title", "updatedAt"]);
      expect((await run(owner, "list_notes", { folderId: folders.sub })).notes.map((n: Json) => n.id)).toEqual([notes.sub]);
      expect((await run(owner, "list_notes", { folderName: "BobShared" })).notes.map((n: Json) => n.id)).toEqual([notes.bobShared]);

      const { folders: listed } = await run(owner, "list_folders");
      for (const folder of listed) expect(Object.keys(folder).sort()).toEqual(["id", "name", "parentId", "path"]);
      expect(listed).toEqual(
        expect.arrayContaining([
          { id: folders.a, name: "A", parentId: null, path: "A" },
          { id: folders.sub, name: "Sub", parentId: folders.a, path: "A/Sub" },
          { id: folders.b, name: "B", parentId: null, path: "B" },
          { id: folders.memorySelf, name: "Self", parentId: expect.any(Number), path: "Memory/Self" },
          { id: folders.bobShared, name: "BobShared", parentId: null, path: "BobShared" },
        ]),
      );
    });

    it("creates, edits (replace and append, by id or noteId) and pins notes", async () => {
      const { note } = await run(owner, "create_note", { title: "Groceries", content: "- eggs", folderName: "B" });
      expect(note).toEqual({ id: expect.any(Number), title: "Groceries", folderId: folders.b });
      const atRoot = await run(owner, "create_note", { title: "Loose", content: "at the top" });
      expect(atRoot.note.folderId).toBeNull();

      expect(await run(owner, "edit_note", { noteId: note.id, content: "- milk", mode: "append" })).toEqual({
        note: { id: note.id, title: "Groceries" },
      });
      const appended = (await alice.client.call("getNote", { params: { id: note.id } })).note.markdown;
      expect(appended).toMatch(/eggs[\s\S]*milk/);

      expect(await run(owner, "edit_note", { id: note.id, content: "# Shopping\n\nbread", title: "Shopping" })).toEqual({
        note: { id: note.id, title: "Shopping" },
      });
      const replaced = (await alice.client.call("getNote", { params: { id: note.id } })).note;
      expect(replaced.title).toBe("Shopping");
      expect(replaced.markdown).not.toContain("eggs");
      expect(replaced.markdown).toContain("bread");
      // The replaced body was kept.
      const { snapshots } = await run(owner, "list_snapshots", { noteId: note.id });
      expect(snapshots.map((s: Json) => s.label)).toContain("Before update");

      expect(await run(owner, "pin_note", { noteId: note.id, pinned: true })).toEqual({ note: { id: note.id, pinned: true } });
      expect((await alice.client.call("getNote", { params: { id: note.id } })).note.pinned).toBe(true);
      expect(await failure(owner, "edit_note", { content: "no id" })).toMatch(/invalid arguments for edit_note: id/);
    });

    it("refuses to write into a folder shared with the owner as a viewer", async () => {
      expect(await failure(owner, "edit_note", { id: notes.bobShared, content: "mine now" })).toMatch(/not change it/);
      expect(await failure(owner, "create_note", { title: "x", content: "y", folderId: folders.bobShared })).toMatch(/not change it/);
    });

    it("saves, lists and restores snapshots", async () => {
      const { note } = await run(owner, "create_note", { title: "Draft", content: "first version", folderId: folders.a });
      const saved = await run(owner, "save_snapshot", { noteId: note.id, label: "v1" });
      expect(saved).toEqual({ snapshot: { seq: expect.any(Number) } });
      await run(owner, "edit_note", { id: note.id, content: "second version" });
      const { snapshots } = await run(owner, "list_snapshots", { noteId: note.id });
      expect(snapshots).toContainEqual({ seq: saved.snapshot.seq, label: "v1", createdAt: expect.any(String) });
      for (const snapshot of snapshots) expect(Object.keys(snapshot).sort()).toEqual(["createdAt", "label", "seq"]);

      expect(await run(owner, "restore_snapshot", { noteId: note.id, seq: saved.snapshot.seq })).toEqual({ restored: true });
      expect((await run(owner, "get_note_content", { noteId: note.id })).markdown).toContain("first version");
      expect(await failure(owner, "restore_snapshot", { noteId: note.id })).toMatch(/seq/);
      expect(await failure(owner, "restore_snapshot", { noteId: note.id, seq: 999 })).toMatch(/not found/);
    });

    it("lists todos by day in the caller's time zone, creates and completes them", async () => {
      const all = await run(owner, "list_todos");
      expect(all.todos.map((t: Json) => t.id)).toEqual([todos.yesterday, todos.today, todos.nextWeek]);
      expect(all.todos[0]).toEqual({
        id: todos.yesterday,
        title: "Pay rent",
        dueDate: dayFromToday(-1),
        priority: null,
        completed: false,
        overdue: true,
      });
      expect(all.todos.map((t: Json) => t.overdue)).toEqual([true, false, false]);
      const ids = async (when: string) => (await run(owner, "list_todos", { when })).todos.map((t: Json) => t.id);
      expect(await ids("today")).toEqual([todos.today]);
      expect(await ids("overdue")).toEqual([todos.yesterday]);
      expect(await ids("upcoming")).toEqual([todos.nextWeek]);

      const { todo } = await run(owner, "create_todo", { title: "Water plants", dueDate: dayFromToday(2), priority: 2 });
      expect(todo).toEqual({ id: expect.any(Number), title: "Water plants", dueDate: dayFromToday(2), priority: 2 });
      expect(await run(owner, "complete_todo", { todoId: todo.id })).toEqual({
        todo: { id: todo.id, title: "Water plants", completed: true },
      });
      expect(await ids("all")).not.toContain(todo.id);
      expect((await run(owner, "list_todos", { completed: true })).todos.map((t: Json) => t.id)).toEqual([todo.id]);
      expect(await failure(owner, "create_todo", { title: "Bad date", dueDate: "2026-02-30" })).toMatch(/dueDate/);
    });

    it("searches memory and writes it, creating folders and notes, appending or replacing", async () => {
      const { results } = await run(owner, "memory_search", { query: "goals" });
      expect(results).toEqual([{ noteId: notes.user, title: "USER", path: "Memory/Self/USER.md", snippet: expect.any(String) }]);

      const first = await run(owner, "memory_write", { path: "Journal/2026-11-25", content: "Walked to the lake." });
      expect(first).toEqual({ note: { id: expect.any(Number), title: "2026-11-25", path: "Memory/Journal/2026-11-25.md" } });
      const second = await run(owner, "memory_write", { path: "Memory/journal/2026-11-25.md", content: "Swam." });
      expect(second.note.id).toBe(first.note.id);
      expect((await run(owner, "get_note_content", { noteId: first.note.id })).markdown).toMatch(/lake[\s\S]*Swam/);

      const replaced = await run(owner, "memory_write", { path: "Self/USER.md", content: "## Goals\n\n- swim a mile", mode: "replace" });
      expect(replaced.note).toEqual({ id: notes.user, title: "USER", path: "Memory/Self/USER.md" });
      const user = await run(owner, "get_note_content", { noteId: notes.user });
      expect(user.markdown).toContain("swim a mile");
      expect(user.markdown).not.toContain("marathon");

      expect(await failure(owner, "memory_write", { path: "Self/../../etc", content: "x" })).toMatch(/must not be/);
      expect(await failure(owner, "memory_write", { path: "a/b/c/d/e/f/g/h/i", content: "x" })).toMatch(/at most 8 levels/);
      const noNotesWrite = ownerGrant(alice.userId, new Set<Scope>(["os.memory:write", "os.notes:read"]), null);
      // Memory is made of notes: without os.notes:write the tool is not in the run at all.
      expect(toolsetFor(noNotesWrite).map((tool) => tool.name)).not.toContain("memory_write");
    });

    it("lists the owner's network for the owner and the heartbeat only", async () => {
      expect(await run(owner, "list_network")).toEqual({
        contacts: [{ userId: String(bob.userId), name: "bob", username: "bob", direction: "mutual" }],
      });
      const heartbeat: RunGrant = { ...owner, caller: { kind: "heartbeat", tier: "MESSAGES" } };
      expect((await run(heartbeat, "list_network")).contacts).toHaveLength(1);
      expect(await run(onlyA, "list_network")).toEqual({ contacts: [] });
      const guest: RunGrant = { ...owner, caller: { kind: "guest", sessionId: "s1", label: "visitor" } };
      expect(await run(guest, "list_network")).toEqual({ contacts: [] });
    });

    it("answers another user's note exactly like a note that does not exist", async () => {
      const missing = 987_654_321;
      for (const [name, args] of [
        ["get_note_content", (id: number) => ({ noteId: id })],
        ["edit_note", (id: number) => ({ id, content: "x" })],
        ["pin_note", (id: number) => ({ noteId: id, pinned: true })],
        ["list_snapshots", (id: number) => ({ noteId: id })],
        ["save_snapshot", (id: number) => ({ noteId: id })],
        ["restore_snapshot", (id: number) => ({ noteId: id, seq: 1 })],
      ] as const) {
        expect(await failure(owner, name, args(notes.bob))).toBe(`note ${notes.bob} not found`);
        expect(await failure(owner, name, args(missing))).toBe(`note ${missing} not found`);
      }
      expect(await failure(owner, "get_note_content", { noteId: notes.trashed })).toBe(`note ${notes.trashed} not found`);
      expect(await failure(owner, "complete_todo", { todoId: 987_654_321 })).toBe("todo 987654321 not found");
    });
  });

  describe("a run whose grant covers folder A only", () => {
    it("searches, greps and lists nothing outside A and its subfolder", async () => {
      const search = await run(onlyA, "search_notes", { query: "shared" });
      expect(search.results.map((r: Json) => r.id).sort()).toEqual([notes.a, notes.sub].sort());
      for (const query of ["yak", "walrus", "kangaroo", "quokka", "goals", "onlyinbee"]) {
        expect((await run(onlyA, "search_notes", { query })).results).toEqual([]);
      }

      const grep = await run(onlyA, "grep_notes", { pattern: "shared-word" });
      expect(grep.results.map((r: Json) => r.noteId).sort()).toEqual([notes.a, notes.sub].sort());
      for (const pattern of ["onlyinbee", "walrus", "kangaroo", "marathon"]) {
        expect((await run(onlyA, "grep_notes", { pattern })).results).toEqual([]);
      }
      expect((await run(onlyA, "grep_notes", { pattern: "wal.us|y[a]k|onlyin", mode: "regex" })).results).toEqual([]);

      // Other tests add notes to A; whatever is there, nothing from elsewhere shows.
      const listed = await run(onlyA, "list_notes", { limit: 50 });
      expect(listed.notes.map((n: Json) => n.id)).toEqual(expect.arrayContaining([notes.a, notes.sub]));
      expect(listed.notes.every((n: Json) => n.folderId === folders.a || n.folderId === folders.sub)).toBe(true);
      expect((await run(onlyA, "list_notes", { folderName: "sub" })).notes.map((n: Json) => n.id)).toEqual([notes.sub]);

      expect(await run(onlyA, "list_folders")).toEqual({
        folders: [
          { id: folders.a, name: "A", parentId: null, path: "A" },
          { id: folders.sub, name: "Sub", parentId: folders.a, path: "A/Sub" },
        ],
      });
      expect((await run(onlyA, "memory_search", { query: "goals" })).results).toEqual([]);
    });

    it("answers folders and notes outside it exactly like ones that do not exist", async () => {
      const missingFolder = 987_654_321;
      for (const name of ["search_notes", "grep_notes", "list_notes"]) {
        const args = name === "grep_notes" ? { pattern: "shared-word" } : name === "search_notes" ? { query: "shared" } : {};
        expect(await failure(onlyA, name, { ...args, folderName: "B" })).toBe('folder "B" not found');
        expect(await failure(onlyA, name, { ...args, folderName: "Nowhere" })).toBe('folder "Nowhere" not found');
        expect(await failure(onlyA, name, { ...args, folderName: "BobShared" })).toBe('folder "BobShared" not found');
      }
      expect(await failure(onlyA, "list_notes", { folderId: folders.b })).toBe(`folder ${folders.b} not found`);
      expect(await failure(onlyA, "list_notes", { folderId: missingFolder })).toBe(`folder ${missingFolder} not found`);

      for (const id of [notes.b, notes.root, notes.trashed, notes.user, notes.bob, notes.bobShared, 987_654_321]) {
        for (const [name, args] of [
          ["get_note_content", { noteId: id }],
          ["edit_note", { id, content: "overwritten" }],
          ["pin_note", { noteId: id, pinned: true }],
          ["list_snapshots", { noteId: id }],
          ["save_snapshot", { noteId: id }],
          ["restore_snapshot", { noteId: id, seq: 1 }],
        ] as const) {
          expect(await failure(onlyA, name, args)).toBe(`note ${id} not found`);
        }
      }
      // Nothing was changed by the refused calls.
      expect((await alice.client.call("getNote", { params: { id: notes.b } })).note.markdown).toContain("yak");
    });

    it("creates notes only in its folders, and writes memory only where it may", async () => {
      expect(await failure(onlyA, "create_note", { title: "Leak", content: "x", folderName: "B" })).toBe('folder "B" not found');
      expect(await failure(onlyA, "create_note", { title: "Leak", content: "x", folderId: folders.b })).toBe(
        `folder ${folders.b} not found`,
      );
      expect(await failure(onlyA, "create_note", { title: "Leak", content: "x" })).toMatch(/list_folders/);
      const { note } = await run(onlyA, "create_note", { title: "From a contact", content: "hello", folderName: "Sub" });
      expect(note.folderId).toBe(folders.sub);
      expect((await run(onlyA, "edit_note", { noteId: note.id, content: "more", mode: "append" })).note.id).toBe(note.id);

      expect(await failure(onlyA, "memory_write", { path: "Self/USER.md", content: "x" })).toBe('memory folder "Memory/Self" not found');
      const withMemory: RunGrant = { ...onlyA, folders: new Set([folders.a, folders.memorySelf]) };
      // Memory itself is not covered, only Memory/Self: the path is still out of reach.
      expect(await failure(withMemory, "memory_write", { path: "Self/USER.md", content: "x" })).toMatch(/not found/);
    });
  });

  describe("the toolset", () => {
    it("holds every native tool once, by bare or qualified name", () => {
      expect(NATIVE_TOOLS.map((tool) => tool.name).sort()).toEqual(
        [
          "search_notes",
          "grep_notes",
          "get_note_content",
          "list_notes",
          "list_folders",
          "create_note",
          "edit_note",
          "pin_note",
          "list_snapshots",
          "save_snapshot",
          "restore_snapshot",
          "list_todos",
          "create_todo",
          "complete_todo",
          "memory_search",
          "memory_write",
          "list_network",
        ].sort(),
      );
      expect(findTool("notes.search_notes")).toBe(findTool("search_notes"));
      expect(findTool("todos.search_notes")).toBeUndefined();
      expect(findTool("nope")).toBeUndefined();
      for (const tool of NATIVE_TOOLS) {
        const schema = inputJsonSchema(tool);
        expect(schema.type).toBe("object");
        expect(tool.description.length).toBeGreaterThan(20);
      }
    });

    it("has only the tools the grant's scopes allow, and none of a disabled namespace", () => {
      const noTodoWrites = new Set(ALL_SCOPES.filter((scope) => scope !== "os.todos:write"));
      const names = toolsetFor({ ...owner, scopes: noTodoWrites }).map((tool) => tool.name);
      expect(names).toContain("list_todos");
      expect(names).not.toContain("create_todo");
      expect(names).not.toContain("complete_todo");
      expect(names).toHaveLength(NATIVE_TOOLS.length - 2);

      const readOnly = toolsetFor(ownerGrant(alice.userId, new Set<Scope>(["os.notes:read"]), null));
      expect(readOnly.map((tool) => tool.name).sort()).toEqual(
        ["get_note_content", "grep_notes", "list_folders", "list_notes", "search_notes"].sort(),
      );
      expect(readOnly.every((tool) => tool.readWrite === "read")).toBe(true);

      const withoutSnapshots = toolsetFor(owner, NATIVE_TOOLS, new Set(["snapshots"]));
      expect(withoutSnapshots.some((tool) => tool.namespace === "snapshots")).toBe(false);
      expect(withoutSnapshots).toHaveLength(NATIVE_TOOLS.length - 3);
      expect(Object.keys(toAiToolSet(readOnly, context(owner))).sort()).toEqual(readOnly.map((tool) => tool.name).sort());
    });
  });

  describe("as AI SDK tools", () => {
    it("turns bad arguments and refusals into tool errors the model reads, and the run goes on", async () => {
      const calls: string[] = [];
      const tools = toAiToolSet(toolsetFor(onlyA), context(onlyA), {
        onStart: (name, id) => calls.push(`start ${name} ${id}`),
        onEnd: (name, id, ok) => calls.push(`end ${name} ${id} ${ok}`),
      });
      // The model is a fake OpenAI-compatible server speaking the real wire format.
      const fake = await startFakeOpenAI();
      try {
        fake.enqueue(
          {
            toolCalls: [
              { id: "c1", name: "search_notes", args: { query: 5 } },
              { id: "c2", name: "get_note_content", args: { noteId: notes.b } },
              { id: "c3", name: "get_note_content", args: { noteId: notes.a } },
            ],
          },
          { text: "done" },
        );
        const { model } = new ModelCatalog(
          { modelProvider: "openai-compatible", modelBaseUrl: fake.baseUrl, model: "fake" },
          () => new LocalModel(),
        ).resolve();
        const result = await generateText({ model, tools, prompt: "look", stopWhen: isStepCount(3), maxRetries: 0 });
        expect(result.text).toBe("done");

        const [first] = result.steps;
        const errors = first?.content.filter((part) => part.type === "tool-error") ?? [];
        expect(errors.map((part) => part.toolCallId).sort()).toEqual(["c1", "c2"]);
        const errorOf = (id: string) => String(errors.find((part) => part.toolCallId === id)?.error);
        expect(errorOf("c1")).toMatch(/^invalid arguments for search_notes: query:/);
        expect(errorOf("c2")).toBe(`note ${notes.b} not found`);
        const read = first?.content.find((part) => part.type === "tool-result");
        expect(read).toMatchObject({ toolCallId: "c3", output: { id: notes.a, title: "Alpha plan" } });

        // What the model was sent back: the errors as text, the result as JSON.
        const sent = (fake.requests[1]?.messages ?? []) as { role: string; tool_call_id?: string; content: string }[];
        const outputs = Object.fromEntries(sent.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content]));
        expect(outputs.c1).toMatch(/invalid arguments/);
        expect(outputs.c2).toBe(`note ${notes.b} not found`);
        expect(JSON.parse(outputs.c3 ?? "{}")).toMatchObject({ id: notes.a });
      } finally {
        await fake.close();
      }

      expect(calls.sort()).toEqual(
        [
          "start search_notes c1",
          "end search_notes c1 false",
          "start get_note_content c2",
          "end get_note_content c2 false",
          "start get_note_content c3",
          "end get_note_content c3 true",
        ].sort(),
      );
    });

    it("reports an unexpected failure as 'the tool failed' and a cancelled run as cancelled", async () => {
      const broken = {
        ...NATIVE_TOOLS[0],
        name: "broken",
        execute: async () => Promise.reject(new Error("database exploded")),
      } as (typeof NATIVE_TOOLS)[number];
      const tools = toAiToolSet([broken], context(owner));
      const options = { toolCallId: "x", messages: [], context: {} };
      await expect(tools.broken?.execute?.({ query: "a" }, options)).rejects.toThrow(UNEXPECTED_FAILURE);
      const aborted = new AbortController();
      aborted.abort();
      const cancelled = toAiToolSet(NATIVE_TOOLS, { ...context(owner), signal: aborted.signal });
      await expect(cancelled.list_folders?.execute?.({}, options)).rejects.toThrow(/cancelled/);
    });
  });

  describe("result size", () => {
    it("cuts one huge note to the cap and says so", async () => {
      const paragraph = `${"lorem ipsum dolor sit amet ".repeat(40)}\n\n`;
      const id = (await alice.client.call("createNote", { body: { title: "Huge", content: paragraph.repeat(60), folderId: folders.a } }))
        .result.note.id;
      const result = await run(onlyA, "get_note_content", { noteId: id });
      expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
      expect(result).toMatchObject({ id, title: "Huge", folderId: folders.a, truncated: true });
      expect(result.markdown.endsWith(CUT_MARK)).toBe(true);
      expect(result.markdown.length).toBeGreaterThan(10_000);
      expect(result.truncatedNotice).toMatch(/cut/);
    });

    it("drops list items once every text is as short as it gets", () => {
      const many = { results: Array.from({ length: 500 }, (_, i) => ({ id: i, snippet: "x".repeat(300) })) };
      const capped = capResult(many) as Json;
      expect(Buffer.byteLength(JSON.stringify(capped))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
      expect(capped.truncated).toBe(true);
      expect(capped.results.length).toBeGreaterThan(10);
      expect(capped.results.length).toBeLessThan(500);
      expect(capped.results[0]).toEqual({ id: 0, snippet: `${"x".repeat(200)}${CUT_MARK}` });
      const small = { results: [{ id: 1 }] };
      expect(capResult(small)).toBe(small);
    });
  });
});
