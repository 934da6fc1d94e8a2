import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

describe.each(storages("sync changes"))("the document change feed on %s", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const created: { id: number; uuid: string }[] = [];
  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    for (const title of ["one", "two", "three"]) {
      const { note } = (await alice.client.call("createNote", { body: { title, content: `${title} body` } })).result;
      created.push(note);
    }
    await bob.client.call("createNote", { body: { title: "bob's", content: "not alice's" } });
  });
  afterAll(() => t.stop());

  type Page = { documents: string[]; position: { since: string; after: string } | null; more: boolean };
  const changes = async (user: TestUser, query: Record<string, string | number> = {}): Promise<Page> =>
    (await user.client.call("documentChanges", { query: query as never })) as Page;

  it("names every note document the caller owns, and none of another user's", async () => {
    const page = await changes(alice);
    expect(page.documents.sort()).toEqual(created.map((note) => `note:${note.uuid}`).sort());
    expect(page.more).toBe(false);
    expect((await changes(bob)).documents).toHaveLength(1);
  });

  it("pages without repeating or skipping, and names a note again once it is stored after the position", async () => {
    const first = await changes(alice, { limit: 2 });
    expect(first.documents).toHaveLength(2);
    expect(first.more).toBe(true);
    if (!first.position) throw new Error("a page that names documents has a position");
    const second = await changes(alice, { ...first.position, limit: 2 });
    expect(second.more).toBe(false);
    expect([...first.documents, ...second.documents].sort()).toEqual(created.map((note) => `note:${note.uuid}`).sort());
    if (!second.position) throw new Error("a page that names documents has a position");
    expect(await changes(alice, second.position)).toEqual({ success: true, documents: [], position: null, more: false });

    const edited = created[0];
    if (!edited) throw new Error("three notes were created");
    await alice.client.call("updateNote", { params: { id: edited.id }, body: { content: "<p>edited</p>" } });
    expect((await changes(alice, second.position)).documents).toEqual([`note:${edited.uuid}`]);
  });

  it("refuses a malformed time (400) and a key without notes:read (403)", async () => {
    expect((await t.fetch("/api/v1/sync/changes?since=yesterday", { headers: { authorization: `Bearer ${alice.apiKey}` } })).status).toBe(
      400,
    );
    const todosOnly = await t.addUser(`todos-only-${storage}`, ["os.todos:read"]);
    expect((await t.fetch("/api/v1/sync/changes", { headers: { authorization: `Bearer ${todosOnly.apiKey}` } })).status).toBe(403);
  });
});
