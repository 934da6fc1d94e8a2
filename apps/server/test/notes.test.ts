import { jsonToText, noteDocName, readNoteBody, writeNoteBody } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

const bodyText = (doc: Parameters<typeof readNoteBody>[0]) => jsonToText(readNoteBody(doc));

describe("notes over REST and sync", () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
  });
  afterAll(() => t.stop());

  async function create(title: string, content: string, extra: { folderId?: number | null; format?: "markdown" | "text" } = {}) {
    return (await alice.client.call("createNote", { body: { title, content, ...extra } })).result.note;
  }

  it("creates a note from Markdown and reads it back as HTML and Markdown", async () => {
    const created = await alice.client.raw("createNote", {
      body: { title: "Plan", content: "# Goals\n\n- [ ] ship\n- [x] test\n\nSee [docs](https://example.com).", tags: ["work"] },
    });
    expect(created.status).toBe(201);
    const { note } = (created.body as { result: { note: { id: number } } }).result;
    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    expect(full).toMatchObject({ title: "Plan", tags: ["work"], pinned: false, docName: noteDocName(full.uuid), folderId: null });
    expect(full.content).toContain("<h1>Goals</h1>");
    expect(full.content).toContain('href="https://example.com"');
    expect(full.markdown).toContain("# Goals");
    expect(full.markdown).toMatch(/- \[x\] test/);
    expect(full.wordCount).toBeGreaterThan(3);
  });

  it("lists a folder's notes pinned first, with limit, totalNotes and limited", async () => {
    const { folder } = await alice.client.call("createFolder", { body: { name: "Listing" } });
    const ids: number[] = [];
    for (const title of ["one", "two", "three"]) ids.push((await create(title, title, { folderId: folder.id })).id);
    await alice.client.call("pinNote", { params: { id: ids[0] as number }, body: { pinned: true } });
    const listed = await alice.client.call("listNotes", { query: { folderId: folder.id, limit: 2 } });
    expect(listed).toMatchObject({ folder: { id: folder.id, name: "Listing" }, totalNotes: 3, limited: true });
    expect(listed.notes.map((n) => n.title)).toEqual(["one", "three"]);
    const byName = await alice.client.call("listNotes", { query: { folderName: "listing" } });
    expect(byName.totalNotes).toBe(3);
  });

  it("refuses an ambiguous folderName with 400", async () => {
    await alice.client.call("createFolder", { body: { path: "A/Twin" } });
    await alice.client.call("createFolder", { body: { path: "B/Twin" } });
    const result = await alice.client.raw("listNotes", { query: { folderName: "Twin" } });
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ error: "ambiguous_folder" });
  });

  it("copies, moves and pins", async () => {
    const { folder } = await alice.client.call("createFolder", { body: { name: "Dest" } });
    const source = await create("Source", "copy me");
    const copy = (await alice.client.call("copyNote", { params: { id: source.id }, body: { folderId: folder.id } })).result.note;
    expect(copy.id).not.toBe(source.id);
    expect((await alice.client.call("getNote", { params: { id: copy.id } })).note.markdown).toContain("copy me");
    await alice.client.call("moveNote", { params: { id: source.id }, body: { folderId: folder.id } });
    expect((await alice.client.call("getNote", { params: { id: source.id } })).note.folderId).toBe(folder.id);
    await alice.client.call("moveNote", { params: { id: source.id }, body: { folderId: null } });
    expect((await alice.client.call("getNote", { params: { id: source.id } })).note.folderId).toBeNull();
    const missing = await alice.client.raw("moveNote", { params: { id: source.id }, body: {} });
    expect(missing.status).toBe(400);
  });

  it("answers 404 for unknown notes and for other owners' notes on every route", async () => {
    const note = await create("Secret", "alice only");
    for (const client of [bob.client]) {
      expect((await client.raw("getNote", { params: { id: note.id } })).status).toBe(404);
      expect((await client.raw("updateNote", { params: { id: note.id }, body: { title: "x" } })).status).toBe(404);
      expect((await client.raw("copyNote", { params: { id: note.id }, body: {} })).status).toBe(404);
      expect((await client.raw("moveNote", { params: { id: note.id }, body: { folderId: null } })).status).toBe(404);
      expect((await client.raw("pinNote", { params: { id: note.id }, body: { pinned: true } })).status).toBe(404);
      expect((await client.raw("listSnapshots", { params: { noteId: note.id } })).status).toBe(404);
      expect((await client.raw("restoreSnapshot", { params: { noteId: note.id }, body: { seq: 1 } })).status).toBe(404);
    }
    expect((await alice.client.raw("getNote", { params: { id: 999_999 } })).status).toBe(404);
    const grep = await bob.client.call("grepNotes", { body: { pattern: "alice only" } });
    expect(grep.results).toEqual([]);
  });

  it("pushes a REST PATCH to an open editor live", async () => {
    const note = await create("Live", "before");
    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    const editor = await openDoc(t.server.syncUrl, alice.apiKey, full.docName);
    try {
      expect(bodyText(editor.doc)).toContain("before");
      await alice.client.call("updateNote", { params: { id: note.id }, body: { content: "<p>after the patch</p>" } });
      await expect.poll(() => bodyText(editor.doc)).toContain("after the patch");
    } finally {
      editor.close();
    }
  });

  it("brings a provider's edit to GET and grep within a second", async () => {
    const note = await create("From sync", "original line");
    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    const editor = await openDoc(t.server.syncUrl, alice.apiKey, full.docName);
    try {
      writeNoteBody(editor.doc, {
        type: "doc",
        content: [{ type: "paragraph", content: [{ type: "text", text: "edited over sync zebra" }] }],
      });
      await expect
        .poll(async () => (await alice.client.call("getNote", { params: { id: note.id } })).note.markdown, { timeout: 1000 })
        .toContain("zebra");
      await expect
        .poll(async () => (await alice.client.call("grepNotes", { body: { pattern: "ZEBRA" } })).results.map((r) => r.noteId), {
          timeout: 1000,
        })
        .toContain(note.id);
      await expect
        .poll(async () => (await alice.client.call("searchNotes", { body: { query: "zebra" } })).results.map((r) => r.id), {
          timeout: 1000,
        })
        .toContain(note.id);
    } finally {
      editor.close();
    }
  });

  it("merges an offline edit with a concurrent REST edit of the same note", async () => {
    const note = await create("Merge", "first paragraph\n\nsecond paragraph\n\nthird paragraph");
    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    const editor = await openDoc(t.server.syncUrl, alice.apiKey, full.docName);
    try {
      editor.socket.disconnect();
      const offline = readNoteBody(editor.doc);
      const paragraphs = offline.content ?? [];
      paragraphs[0] = { type: "paragraph", content: [{ type: "text", text: "first paragraph, edited offline" }] };
      writeNoteBody(editor.doc, { ...offline, content: paragraphs });
      await alice.client.call("updateNote", {
        params: { id: note.id },
        body: { content: "<p>first paragraph</p><p>second paragraph</p><p>third paragraph, edited over REST</p>" },
      });
      await editor.socket.connect();
      const expected = ["edited offline", "edited over REST"];
      await expect.poll(() => expected.every((s) => bodyText(editor.doc).includes(s))).toBe(true);
      await expect
        .poll(async () => {
          const markdown = (await alice.client.call("getNote", { params: { id: note.id } })).note.markdown;
          return expected.every((s) => markdown.includes(s));
        })
        .toBe(true);
    } finally {
      editor.close();
    }
  });

  it("snapshots before PATCH, restores as a forward change, and every connected peer converges", async () => {
    const note = await create("History", "version one");
    await alice.client.call("updateNote", { params: { id: note.id }, body: { content: "<p>version two</p>" } });
    const history = await alice.client.call("listSnapshots", { params: { noteId: note.id } });
    expect(history.snapshots).toHaveLength(1);
    expect(history.snapshots[0]).toMatchObject({ seq: 1, label: "Before update" });
    const bySeq = await alice.client.call("getSnapshotBySeq", { params: { noteId: note.id, seq: 1 } });
    expect(bySeq.snapshot.markdown).toContain("version one");
    const byVersion = await alice.client.call("getSnapshotByVersion", { params: { noteId: note.id, versionId: bySeq.snapshot.versionId } });
    expect(byVersion.snapshot.seq).toBe(1);

    const labelled = await alice.client.raw("createSnapshot", { params: { noteId: note.id }, body: { label: "Checkpoint" } });
    expect(labelled.status).toBe(201);
    expect(labelled.body).toMatchObject({
      seq: 2,
      label: "Checkpoint",
      noteId: note.id,
      versionId: expect.any(Number),
      createdAt: expect.any(String),
    });

    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    const peerA = await openDoc(t.server.syncUrl, alice.apiKey, full.docName);
    const peerB = await openDoc(t.server.syncUrl, alice.apiKey, full.docName);
    try {
      const restored = await alice.client.call("restoreSnapshot", { params: { noteId: note.id }, body: { seq: 1 } });
      expect(restored).toMatchObject({ restoredSeq: 1, backupSeq: 3 });
      for (const peer of [peerA, peerB]) {
        await expect.poll(() => bodyText(peer.doc)).toContain("version one");
        expect(bodyText(peer.doc)).not.toContain("version two");
      }
      // The legacy form restores too, and the restore itself can be undone.
      await alice.client.call("restoreSnapshot", { params: { noteId: note.id }, body: { versionId: byVersion.snapshot.versionId } });
      await alice.client.call("restoreSnapshot", { params: { noteId: note.id }, body: { seq: 3 } });
      await expect.poll(() => bodyText(peerA.doc)).toContain("version two");
    } finally {
      peerA.close();
      peerB.close();
    }
    expect((await alice.client.raw("restoreSnapshot", { params: { noteId: note.id }, body: { seq: 99 } })).status).toBe(404);
    expect((await alice.client.raw("restoreSnapshot", { params: { noteId: note.id }, body: {} })).status).toBe(400);
  });

  it("keeps notes across a restart", async () => {
    const note = await create("Durable", "kept on disk");
    await t.restart();
    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    expect(full.markdown).toContain("kept on disk");
  });

  it("searches titles and bodies, ranked, with snippets, and only the caller's notes", async () => {
    const inTitle = await create("Quarterly roadmap", "nothing here");
    const inBody = await create("Misc", "the roadmap is mentioned once in this body, among other words");
    await bob.client.call("createNote", { body: { title: "Bob's roadmap", content: "roadmap roadmap" } });
    const { results } = await alice.client.call("searchNotes", { body: { query: "roadmap" } });
    expect(results.map((r) => r.id)).toEqual([inTitle.id, inBody.id]);
    expect(results[1]?.snippet).toContain("roadmap");
    const prefix = await alice.client.call("searchNotes", { body: { query: "quarter" } });
    expect(prefix.results.map((r) => r.id)).toContain(inTitle.id);
    expect((await alice.client.call("searchNotes", { body: { query: "nonexistentword" } })).results).toEqual([]);
  });

  it.each(['"unbalanced', "roadmap OR (", "NEAR(a b)", "*", "^$%&", "' or 1=1 --"])(
    "survives the hostile search query %j",
    async (query) => {
      const result = await alice.client.raw("searchNotes", { body: { query } });
      expect(result.status).toBe(200);
    },
  );

  describe("bad input", () => {
    it("sanitises hostile HTML", async () => {
      const note = await create("Hostile", "x");
      await alice.client.call("updateNote", {
        params: { id: note.id },
        body: {
          content: '<p onclick="steal()">safe <script>alert(1)</script><a href="javascript:alert(1)">link</a></p><iframe src="x"></iframe>',
        },
      });
      const { content } = (await alice.client.call("getNote", { params: { id: note.id } })).note;
      expect(content).toContain("safe");
      expect(content).not.toMatch(/script|onclick|javascript:|iframe/i);
    });

    it("refuses content over 10 MB with 422 and keeps the note intact", async () => {
      const note = await create("Big", "small and intact");
      const huge = "x".repeat(10 * 1024 * 1024 + 1);
      const created = await alice.client.raw("createNote", { body: { title: "Too big", content: huge } });
      expect(created.status).toBe(422);
      expect(created.body).toMatchObject({ error: "invalid_request", message: expect.stringContaining("body.content") });
      const patched = await alice.client.raw("updateNote", { params: { id: note.id }, body: { content: huge } });
      expect(patched.status).toBe(400);
      expect((await alice.client.call("getNote", { params: { id: note.id } })).note.markdown).toContain("small and intact");
    });

    it.each([
      ["a missing title", { content: "x" }, "body.title"],
      ["an empty title", { title: "  ", content: "x" }, "body.title"],
      ["missing content", { title: "x" }, "body.content"],
      ["a folder that is not a number", { title: "x", content: "x", folderId: "General" }, "body.folderId"],
    ])("answers %s on create with 422 naming the field", async (_, body, field) => {
      const response = await t.fetch("/api/v1/os/notes", {
        method: "POST",
        headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(422);
      expect(((await response.json()) as { message: string }).message).toContain(field);
    });

    it("answers a regex bomb with 400 within the time bound, and keeps serving", async () => {
      await create("Bomb target", `${"a".repeat(40)}!`);
      const started = Date.now();
      const result = await alice.client.raw("grepNotes", { body: { pattern: "^(a+)+$", mode: "regex" } });
      expect(result.status).toBe(400);
      expect(result.body).toMatchObject({ error: "regex_timeout" });
      expect(Date.now() - started).toBeLessThan(10_000);
      const ok = await alice.client.call("grepNotes", { body: { pattern: "bomb", mode: "regex" } });
      expect(ok.summary.notesScanned).toBeGreaterThan(0);
    });

    it("stores invalid UTF-8 as replacement characters, never a 500", async () => {
      const bytes = Buffer.concat([Buffer.from('{"title":"Bytes","content":"ok '), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(' end"}')]);
      const response = await t.fetch("/api/v1/os/notes", {
        method: "POST",
        headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json" },
        body: bytes,
      });
      expect(response.status).toBe(201);
      const { result } = (await response.json()) as { result: { note: { id: number } } };
      const { markdown } = (await alice.client.call("getNote", { params: { id: result.note.id } })).note;
      expect(markdown).toContain("ok \uFFFD(\uFFFD end");
    });

    it("imports a path 50 folders deep", async () => {
      const path = `${Array.from({ length: 50 }, (_, i) => `level${i}`).join("/")}/deep.md`;
      const result = await alice.client.call("accumulate", { body: { files: [{ path, content: "at the bottom" }] } });
      expect(result).toMatchObject({ created: 1, errors: [] });
      const tooDeep = `${Array.from({ length: 70 }, (_, i) => `x${i}`).join("/")}/deep.md`;
      const refused = await alice.client.call("accumulate", { body: { files: [{ path: tooDeep, content: "x" }] } });
      expect(refused.errors).toEqual([{ path: tooDeep, error: expect.stringContaining("64") }]);
    });

    it("answers an invalid regex with 400", async () => {
      const result = await alice.client.raw("grepNotes", { body: { pattern: "([a-z", mode: "regex" } });
      expect(result.status).toBe(400);
      expect(result.body).toMatchObject({ error: "invalid_regex" });
    });

    it("greps with context lines and case sensitivity", async () => {
      await create("Context", "alpha\nbeta\nGamma\ndelta\nepsilon", { format: "text" });
      const found = await alice.client.call("grepNotes", {
        body: { pattern: "Gamma", caseSensitive: true, contextBefore: 1, contextAfter: 2 },
      });
      const match = found.results.find((r) => r.title === "Context")?.matches[0];
      expect(match).toMatchObject({ text: "Gamma", match: "Gamma", before: ["beta"], after: ["delta", "epsilon"] });
      const none = await alice.client.call("grepNotes", { body: { pattern: "gamma", caseSensitive: true } });
      expect(none.results.find((r) => r.title === "Context")).toBeUndefined();
    });
  });
});

describe.each(storages("emoji search"))("search on %s", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("finds emoji, alone or beside words (neither index tokenises them)", async () => {
    const create = async (title: string, content: string) =>
      (await alice.client.call("createNote", { body: { title, content } })).result.note;
    const party = await create("Party 🎉", "bring snacks");
    const cake = await create("Baking", "a cake with 🍰 and candles 🕯️ for the 🎉");
    await create("Plain", "cake without symbols");
    const search = async (query: string) => (await alice.client.call("searchNotes", { body: { query } })).results;
    expect((await search("🎉")).map((r) => r.id).sort()).toEqual([party.id, cake.id].sort());
    expect((await search("cake 🍰")).map((r) => r.id)).toEqual([cake.id]);
    expect(await search("👩‍💻")).toEqual([]);
    const [hit] = await search("🕯️");
    expect(hit?.id).toBe(cake.id);
    expect(hit?.snippet).toContain("🕯️");
  });
});
