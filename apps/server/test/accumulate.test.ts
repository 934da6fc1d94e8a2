import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, type TestUser } from "./harness";

describe("POST /accumulate and folder rename/delete", () => {
  let t: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    await alice.client.call("init");
  });
  afterAll(() => t.stop());

  const accumulate = (
    body: Parameters<typeof alice.client.call<"accumulate">>[1] extends infer I ? (I extends { body: infer B } ? B : never) : never,
  ) => alice.client.raw("accumulate", { body });

  it("imports files into folders it creates, and updates the same path with versions", async () => {
    const first = await accumulate({ files: [{ path: "Projects/Tandem/plan.md", content: "# Plan\n\nfirst draft" }] });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, created: 1, updated: 0, foldersCreated: ["Projects/Tandem"], errors: [] });

    const same = await alice.client.call("accumulate", {
      body: { files: [{ path: "Projects/Tandem/plan.md", content: "# Plan\n\nfirst draft" }] },
    });
    expect(same).toMatchObject({ created: 0, updated: 0, skipped: 1 });

    const second = await alice.client.call("accumulate", {
      body: { files: [{ path: "projects/tandem/plan.md", content: "# Plan\n\nsecond draft", message: "revise" }] },
    });
    expect(second).toMatchObject({
      created: 0,
      updated: 1,
      versions: [{ file: "projects/tandem/plan.md", from: 1, to: 2, message: "revise" }],
    });

    const tandem = (await alice.client.call("listFolders")).folders.find((f) => f.name === "Tandem");
    const notes = await alice.client.call("listNotes", { query: { folderId: tandem?.id } });
    expect(notes.notes.map((n) => n.title)).toEqual(["plan"]);
    const note = await alice.client.call("getNote", { params: { id: notes.notes[0]?.id as number } });
    expect(note.note.markdown).toContain("second draft");
    const history = await alice.client.call("getSnapshotBySeq", { params: { noteId: note.note.id, seq: 1 } });
    expect(history.snapshot.markdown).toContain("first draft");
  });

  it("reports a file over 10 MB in errors and still applies the rest", async () => {
    const result = await alice.client.call("accumulate", {
      body: {
        files: [
          { path: "Big/huge.md", content: "x".repeat(10 * 1024 * 1024 + 1) },
          { path: "Big/small.md", content: "fine" },
        ],
      },
    });
    expect(result.created).toBe(1);
    expect(result.errors).toEqual([{ path: "Big/huge.md", error: expect.stringContaining("10 MB") }]);
  });

  it("refuses more than 50 entries with 400", async () => {
    const files = Array.from({ length: 51 }, (_, i) => ({ path: `Many/n${i}.md`, content: "x" }));
    const result = await accumulate({ files });
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ error: "invalid_request", message: expect.stringContaining("at most 50") });
    expect((await accumulate({})).status).toBe(400);
  });

  it("accepts texts, deletes notes and folders, and puts Memory/ paths in the Memory folder", async () => {
    const result = await alice.client.call("accumulate", {
      body: {
        texts: [{ title: "Legacy", content: "old form", folder: "Inbox" }],
        files: [{ path: "memory/people/ada.md", content: "Ada likes compilers" }],
        folders: { create: ["Archive/2026"] },
      },
    });
    expect(result).toMatchObject({ created: 2, errors: [] });
    const folders = (await alice.client.call("listFolders")).folders;
    expect(folders.filter((f) => f.parentId === null).map((f) => f.name)).toEqual(expect.arrayContaining(["Inbox", "Memory", "Archive"]));

    const memory = await alice.client.call("memorySearch", { body: { query: "compilers", maxResults: 5 } });
    expect(memory.result.results).toEqual([
      expect.objectContaining({ title: "ada", path: "Memory/people/ada.md", score: expect.any(Number) }),
    ]);
    const outside = await alice.client.call("memorySearch", { body: { query: "old form" } });
    expect(outside.result.results).toEqual([]);

    const removal = await alice.client.call("accumulate", {
      body: { delete: [{ path: "Inbox/Legacy.md" }, { path: "Inbox/Nothing.md" }], folders: { delete: ["Archive"] } },
    });
    expect(removal).toMatchObject({ deleted: 2, errors: [{ path: "Inbox/Nothing.md", error: "no such note" }] });
    const after = (await alice.client.call("listFolders")).folders.map((f) => f.name);
    expect(after).not.toContain("Archive");
    expect(after).toContain("2026");
  });

  it("renames and moves folders, refuses cycles, and deletes a folder without losing its notes", async () => {
    const { folder: parent } = await alice.client.call("createFolder", { body: { path: "Outer/Inner" } });
    const outer = (await alice.client.call("listFolders", { query: { parentId: "root" } })).folders.find((f) => f.name === "Outer");
    const note = (await alice.client.call("createNote", { body: { title: "Keep me", content: "safe", folderId: parent.id } })).result.note;

    const renamed = await alice.client.call("updateFolder", { params: { id: parent.id }, body: { name: "Renamed" } });
    expect(renamed.folder).toMatchObject({ name: "Renamed", parentId: outer?.id });
    const cycle = await alice.client.raw("updateFolder", { params: { id: outer?.id as number }, body: { parentId: parent.id } });
    expect(cycle.status).toBe(400);

    const removed = await alice.client.call("deleteFolder", { params: { id: parent.id } });
    expect(removed).toMatchObject({ movedNotes: 1, movedFolders: 0, movedTo: outer?.id });
    expect((await alice.client.call("getNote", { params: { id: note.id } })).note.folderId).toBe(outer?.id);
    expect((await alice.client.raw("deleteFolder", { params: { id: parent.id } })).status).toBe(404);
  });

  it("reports counts and sizes in status and a summary of recent notes", async () => {
    const status = await alice.client.call("status");
    expect(status.contextCount).toBeGreaterThan(3);
    expect(status.totalSizeBytes).toBeGreaterThan(10);
    expect(status.lastSyncedAt).not.toBeNull();
    const summary = await alice.client.call("notesSummary", { query: { limit: 2 } });
    expect(summary.notes).toHaveLength(2);
    expect(summary.notes[0]).toMatchObject({ relativeTime: "just now" });
    expect(summary.notesSummary).toContain("<ul>");
    expect((await alice.client.raw("notesSummary", { query: { limit: 21 } })).status).toBe(400);
  });
});
