import { randomUUID } from "node:crypto";
import { noteDocName, putNote, workspaceDocName } from "@tandem/core";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { up as indexTitleOnlyNotes } from "../src/db/migrations/0034-title-only-notes";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { USER_MD } from "./search-fixtures";
import { openDoc, type SyncedDoc } from "./sync-client";

describe.each(storages("search ranking"))("search ranking on %s", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  const create = async (user: TestUser, title: string, content: string, folderId?: number) =>
    (await user.client.call("createNote", { body: { title, content, folderId } })).result.note;
  const search = async (query: string, limit?: number) => (await alice.client.call("searchNotes", { body: { query, limit } })).results;
  const memory = async (query: string) => (await alice.client.call("memorySearch", { body: { query } })).result.results;

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    const accumulated = await alice.client.call("accumulate", {
      body: {
        files: [
          { path: "Memory/Self/USER.md", content: USER_MD },
          { path: "Memory/Journal/standup.md", content: "Standup notes: the goal for today is to fix the login bug." },
          { path: "Memory/people.md", content: "Grace prefers email. Linus prefers patches." },
        ],
      },
    });
    expect(accumulated.errors).toEqual([]);
  });
  afterAll(() => t.stop());

  it("answers 'what are my goals' from memory with USER.md first, its snippet from the Goals section", async () => {
    const results = await memory("what are my goals");
    expect(results[0]).toMatchObject({ title: "USER", path: "Memory/Self/USER.md", score: expect.any(Number) });
    expect(results[0]?.snippet).toMatch(/^Goals — /);
    expect(results[0]?.snippet).toContain("Run a marathon");
    expect(results[0]?.snippet).not.toContain("Tea");
    expect(results[0]?.snippet).not.toContain("Lovelace");
    expect(results[0]?.snippet.length).toBeLessThanOrEqual(200);
    // The journal mentions a goal once in passing: found, but after the note about goals.
    expect(results.map((r) => r.title)).toEqual(["USER", "standup"]);

    const notes = await search("what are my goals");
    const user = notes.find((r) => r.title === "USER");
    expect(user?.snippet).toContain("Run a marathon");
    expect(notes[0]?.title).toBe("USER");
  });

  it("ranks a note matching more of the words above one matching fewer", async () => {
    const two = await create(alice, "Shore walk", "We saw a pelican near the harbour at dawn, then went home for breakfast.");
    const one = await create(alice, "Birds", "A pelican flew over the field at dawn, then we went home for breakfast.");
    await create(alice, "Unrelated", "Nothing about birds or boats here at all, just breakfast.");
    const results = await search("pelican harbour lighthouse");
    expect(results.map((r) => r.id)).toEqual([two.id, one.id]);
    expect(results[0]?.score).toBeGreaterThan(results[1]?.score ?? Number.POSITIVE_INFINITY);
    expect(results[0]?.snippet).toContain("harbour");
  });

  it("ranks rarer words above common ones, and titles and headings above bodies", async () => {
    for (let i = 0; i < 6; i++) await create(alice, `Log ${i}`, `The weekly meeting number ${i} happened.`);
    const rare = await create(alice, "Note A", "The zeppelin flew over the town.");
    const common = await create(alice, "Note B", "The monthly meeting ran over time.");
    const byRarity = await search("zeppelin meeting");
    // One word each: the note with the rarer word ranks first, the common word's notes after it.
    expect(byRarity[0]?.id).toBe(rare.id);
    expect(byRarity.map((r) => r.id)).toContain(common.id);

    const inBody = await create(alice, "Misc", "Something about the quokka, among many other words in a long sentence.");
    const inHeading = await create(alice, "Zoo", "## Quokka\n\nSmall marsupials, among many other words in a long sentence.");
    const inTitle = await create(alice, "Quokka", "Small marsupials, among many other words in a long sentence.");
    expect((await search("quokka")).map((r) => r.id)).toEqual([inTitle.id, inHeading.id, inBody.id]);
  });

  it("stems words and drops stop words", async () => {
    const note = await create(alice, "Shoes", "I am running in new shoes and organized the cupboard.");
    for (const query of ["runs", "run", "organizing the cupboards", "Where are the SHOE?"]) {
      expect(
        (await search(query)).map((r) => r.id),
        query,
      ).toContain(note.id);
    }
  });

  it("answers a query of stop words only with nothing, not an error", async () => {
    for (const query of ["what is it", "the", "Who are they?", "I'm"]) {
      expect(await search(query), query).toEqual([]);
      expect(await memory(query), query).toEqual([]);
    }
  });

  it("keeps scopes exact: memory is the Memory tree only, and another user's notes never match", async () => {
    const outside = await create(alice, "Goals", "## Goals\n\n- goals goals goals: every goal I have");
    await create(bob, "Goals", "## Goals\n\n- bob's goals");
    const archive = (await alice.client.call("createFolder", { body: { path: "Archive/Memory" } })).folder.id;
    await create(alice, "Old plans", "## Goals\n\n- goals from years ago", archive);

    const inMemory = await memory("goals");
    expect(inMemory.map((r) => r.path)).toEqual(["Memory/Self/USER.md", "Memory/Journal/standup.md"]);
    const everywhere = await search("goals");
    // The best match of all is found by notes search, but never by memory search.
    expect(everywhere[0]?.id).toBe(outside.id);
    expect(everywhere.map((r) => r.title).sort()).toEqual(["Goals", "Old plans", "USER", "standup"]);
    expect((await bob.client.call("searchNotes", { body: { query: "goals" } })).results.map((r) => r.title)).toEqual(["Goals"]);
  });

  it("searches folders shared with the caller, and nothing else of the owner's", async () => {
    const team = (await bob.client.call("createFolder", { body: { path: "Team" } })).folder.id;
    const shared = await create(bob, "Team plan", "the albatross migration", team);
    await create(bob, "Private", "albatross albatross albatross");
    expect((await bob.client.raw("shareFolder", { params: { id: team }, body: { username: "alice", role: "viewer" } })).status).toBe(201);
    expect((await search("albatross")).map((r) => r.id)).toEqual([shared.id]);
  });

  it("finds a weak match in scope below hundreds of better ones out of it", async () => {
    // SQLite ranks the best 500 matches first and filters them by scope; none of these is alice's.
    // Written straight into bob's views (what search reads): 550 notes over the API take too long.
    const now = new Date().toISOString();
    await t.server.context.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 550; i++) {
        const uuid = randomUUID();
        const title = `Walrus ${i}`;
        await tx
          .insertInto("notes")
          .values({ uuid, owner_id: bob.userId, folder_id: null, title, pinned: 0, tags: "[]", created_at: now, updated_at: now })
          .execute();
        await tx
          .insertInto("note_bodies")
          .values({ uuid, title, text: "walrus walrus walrus", word_count: 3, size_bytes: 20, updated_at: now })
          .execute();
      }
    });
    const mine = await create(alice, "Trip", `${"A long day by the sea with many other words. ".repeat(20)} We saw one walrus.`);
    expect((await search("walrus")).map((r) => r.id)).toEqual([mine.id]);
    expect(await bob.client.call("searchNotes", { body: { query: "walrus", limit: 100 } }).then((r) => r.results)).toHaveLength(100);
  });

  it("never finds a trashed note", async () => {
    const note = await create(alice, "Ephemeral", "the narwhal in the fjord");
    expect((await search("narwhal")).map((r) => r.id)).toEqual([note.id]);
    await alice.client.call("trashNote", { params: { id: note.id } });
    expect(await search("narwhal")).toEqual([]);
  });

  it("keeps emoji as required substrings beside OR-ed words", async () => {
    const cake = await create(alice, "Party", "a cake 🎂 for the party");
    await create(alice, "Baking", "a cake without candles");
    expect((await search("cake 🎂")).map((r) => r.id)).toEqual([cake.id]);
    expect((await search("🎂"))[0]?.snippet).toContain("🎂");
  });

  it("finds a note made over sync with a title and no body by its title (issue #26, point 4)", async () => {
    // As the desktop makes one: an entry in the workspace document, untitled and then named, and
    // the note's own document opened and left empty.
    const uuid = randomUUID();
    const at = new Date().toISOString();
    const settled = (synced: SyncedDoc) => expect.poll(() => synced.provider.unsyncedChanges, { timeout: 20_000 }).toBe(0);
    const workspace = await openDoc(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    let body: SyncedDoc | undefined;
    try {
      workspace.doc.transact(() =>
        putNote(workspace.doc, uuid, { title: "", folder: null, pinned: false, tags: [], createdAt: at, updatedAt: at }),
      );
      await settled(workspace);
      body = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(uuid));
      expect(body.outcome).toBe("synced");
      workspace.doc.transact(() => putNote(workspace.doc, uuid, { title: "Axolotl husbandry", updatedAt: new Date().toISOString() }));
      await settled(workspace);
    } finally {
      body?.close();
      workspace.close();
    }
    const listed = async () => (await alice.client.call("listNotes", { query: {} })).notes.find((n) => n.uuid === uuid);
    await expect.poll(async () => (await listed())?.title, { timeout: 20_000 }).toBe("Axolotl husbandry");
    const id = (await listed())?.id;
    expect((await search("axolotl")).map((r) => [r.id, r.title])).toEqual([[id, "Axolotl husbandry"]]);
    expect((await search("husbandry")).map((r) => r.id)).toEqual([id]);
  });

  it("migration 0034 indexes the titles of notes that had no text view", async () => {
    const note = await create(alice, "Capybara census", "");
    // As a note made over sync with no body was stored before it: no row in the text view.
    const db = t.server.context.db;
    await db.deleteFrom("note_bodies").where("uuid", "=", note.uuid).execute();
    expect(await search("capybara")).toEqual([]);
    await indexTitleOnlyNotes(db as unknown as Kysely<unknown>);
    expect((await search("capybara")).map((r) => r.id)).toEqual([note.id]);
  });

  it("answers an empty or blank query with 400, and hostile ones with 200", async () => {
    for (const query of ["", "   "]) {
      expect((await alice.client.raw("searchNotes", { body: { query } })).status).toBe(400);
      expect((await alice.client.raw("memorySearch", { body: { query } })).status).toBe(400);
    }
    for (const query of ['"unbalanced', "goals OR (", "NEAR(goals run)", "goals*", "^$%&", "' or 1=1 --", "a:* | b & !c", "title:goals"]) {
      expect((await alice.client.raw("searchNotes", { body: { query } })).status, query).toBe(200);
      expect((await alice.client.raw("memorySearch", { body: { query } })).status, query).toBe(200);
    }
  });
});
