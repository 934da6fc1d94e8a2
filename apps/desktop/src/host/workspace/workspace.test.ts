import { rm } from "node:fs/promises";
import { noteDocName, putNote, textToJson, writeNoteBody } from "@tandem/core";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HubClient, signInAs, startTestHost, tempDir, waitFor } from "../../../test/host-harness";
import type { Host } from "../host";

/** Against a real server: search (server and local), snapshots, and what they say when they cannot answer. */
describe("workspace facet: search and snapshots", () => {
  let ts: TestServer;
  let user: TestUser;
  let dataDir: string;
  let host: Host;
  let hub: HubClient;

  /** A note made through the REST API; answers its uuid and id. */
  const restNote = async (title: string, content: string, folderName?: string) => {
    const { result } = await user.client.call("createNote", { body: { title, content, folderName } });
    return result.note;
  };

  /** A note made the way the renderer makes one: through the local hub, into the workspace and its own document. */
  const localNote = async (title: string, text: string): Promise<string> => {
    const uuid = crypto.randomUUID();
    const { workspaceDoc } = hub.sync;
    const workspace = await hub.open(workspaceDoc);
    const at = new Date().toISOString();
    workspace.transact(() => putNote(workspace, uuid, { title, folder: null, pinned: false, tags: [], createdAt: at, updatedAt: at }));
    writeNoteBody(await hub.open(noteDocName(uuid)), textToJson(text));
    await waitFor("the hub to have the note", () => hub.settled());
    return uuid;
  };

  beforeAll(async () => {
    ts = await startTestServer();
    user = await ts.addUser("wanda");
    dataDir = await tempDir("tandem-desktop-workspace-");
    host = await startTestHost(dataDir);
  });

  afterAll(async () => {
    hub?.close();
    await host?.close();
    await ts?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("asks to sign in first", async () => {
    await expect(host.api.searchNotes({ query: "anything" })).rejects.toThrow("Sign in first");
    await expect(host.api.listSnapshots({ noteUuid: crypto.randomUUID() })).rejects.toThrow("Sign in first");
    await signInAs(host, ts, user);
    hub = new HubClient(await host.api.getLocalSync());
  });

  it("refuses malformed input, naming the method and the field", async () => {
    const api = host.api as unknown as Record<string, (input: unknown) => Promise<unknown>>;
    const cases: [string, unknown, string][] = [
      ["searchNotes", { query: "   " }, "searchNotes: invalid input: query must not be empty"],
      ["searchNotes", null, "searchNotes: invalid input"],
      ["searchNotes", { query: "x".repeat(501) }, "query"],
      ["listSnapshots", { noteUuid: "not-a-uuid" }, "listSnapshots: invalid input: noteUuid must be a lowercase uuid"],
      ["getSnapshot", { noteUuid: crypto.randomUUID(), seq: 0 }, "getSnapshot: invalid input: seq"],
      ["getSnapshot", { noteUuid: crypto.randomUUID(), seq: "1" }, "seq"],
      ["createSnapshot", { noteUuid: crypto.randomUUID(), label: 42 }, "createSnapshot: invalid input: label"],
      ["restoreSnapshot", { noteUuid: crypto.randomUUID() }, "restoreSnapshot: invalid input: seq"],
    ];
    for (const [method, input, message] of cases) {
      await expect(api[method]?.(input), `${method} ${JSON.stringify(input)}`).rejects.toThrow(message);
    }
  });

  it("searches on the server, answering each hit by uuid, in folders too", async () => {
    await user.client.call("createFolder", { body: { path: "Garden/Trees" } });
    const orchard = await restNote("Orchard", "Apples and **pears** along the south wall.", "Trees");
    const market = await restNote("Market list", "Pears, bread, cheese.");
    const answer = await waitFor("the server to index both notes", async () => {
      const found = await host.api.searchNotes({ query: "pears" });
      return found.results.length === 2 ? found : undefined;
    });
    expect(answer.source).toBe("server");
    expect(answer.results.map((hit) => hit.uuid).sort()).toEqual([orchard.uuid, market.uuid].sort());
    const hit = answer.results.find((result) => result.uuid === orchard.uuid);
    expect(hit).toMatchObject({ title: "Orchard", snippet: expect.stringContaining("pears") });
  });

  it("saves, lists, shows and restores snapshots", async () => {
    const note = await restNote("Plan", "First version.");
    const saved = await host.api.createSnapshot({ noteUuid: note.uuid, label: "  Before the rewrite  " });
    expect(saved).toMatchObject({ label: "Before the rewrite", wordCount: 2 });
    expect(await host.api.listSnapshots({ noteUuid: note.uuid })).toEqual([saved]);
    expect(await host.api.getSnapshot({ noteUuid: note.uuid, seq: saved.seq })).toEqual({ ...saved, html: "<p>First version.</p>" });

    await user.client.call("updateNote", { params: { id: note.id }, body: { content: "<p>Second version.</p>" } });
    await host.api.restoreSnapshot({ noteUuid: note.uuid, seq: saved.seq });
    expect((await user.client.call("getNote", { params: { id: note.id } })).note.content).toBe("<p>First version.</p>");
    // The update and the restore each kept what they replaced: three snapshots, newest first.
    const listed = await host.api.listSnapshots({ noteUuid: note.uuid });
    expect(listed).toHaveLength(3);
    expect(listed.at(-1)).toEqual(saved);

    await expect(host.api.getSnapshot({ noteUuid: note.uuid, seq: 99 })).rejects.toThrow(/not found/i);
  });

  it("says so when the server has no such note yet", async () => {
    await expect(host.api.listSnapshots({ noteUuid: crypto.randomUUID() })).rejects.toThrow(
      "The server does not have this note yet; snapshots become available once it has synced",
    );
  });

  it("finds a note made on this machine once it has synced, by uuid", async () => {
    const uuid = await localNote("Made here", "Typed in the desktop app.");
    const snapshot = await waitFor("the server to have the note", () =>
      host.api.createSnapshot({ noteUuid: uuid, label: "synced" }).catch(() => undefined),
    );
    expect(snapshot.label).toBe("synced");
  });

  it("searches this machine's copy when the server is out of reach, titles first", async () => {
    const offlineUuid = await localNote("Notes on pears", "Written while online, found offline.");
    await ts.server.close();
    await waitFor("the host to notice it is offline", async () => (await host.api.getStatus()).sync.state === "offline");
    const unsynced = await localNote("Offline thoughts", "Pears again, and a long line about quinces that goes on and on.");
    // A note in the Trash is out of the search, here as on the server.
    const binned = await localNote("Binned pears", "pears pears pears");
    const workspace = await hub.open(hub.sync.workspaceDoc);
    workspace.transact(() => putNote(workspace, binned, { trashedAt: new Date().toISOString() }));
    await waitFor("the hub to have it trashed", () => hub.settled());

    const answer = await host.api.searchNotes({ query: "pears" });
    expect(answer.source).toBe("local");
    const titles = answer.results.map((hit) => hit.title);
    expect(titles[0]).toBe("Notes on pears");
    expect(new Set(titles)).toEqual(new Set(["Notes on pears", "Offline thoughts", "Orchard", "Market list"]));
    expect(answer.results[0]?.uuid).toBe(offlineUuid);
    const fromBody = answer.results.find((hit) => hit.uuid === unsynced);
    expect(fromBody?.snippet).toContain("Pears again");
    // Every word must appear, in the title or the body.
    expect((await host.api.searchNotes({ query: "pears quinces" })).results.map((hit) => hit.uuid)).toEqual([unsynced]);
    expect((await host.api.searchNotes({ query: "nowhere-to-be-found" })).results).toEqual([]);
  });

  it("previews notes from this machine's copies, online or not, and emoji are found offline", async () => {
    const long = `Emoji 🎉 first, then ${"many words ".repeat(30)}`;
    const uuid = await localNote("Preview me", long);
    const empty = await localNote("Empty", "");
    const previews = await host.api.notePreviews({ noteUuids: [uuid, empty, crypto.randomUUID()] });
    expect(Object.keys(previews)).toEqual([uuid]);
    expect(previews[uuid]?.startsWith("Emoji 🎉 first, then many words")).toBe(true);
    expect(previews[uuid]?.endsWith("…")).toBe(true);
    expect(previews[uuid]?.length).toBeLessThanOrEqual(161);
    expect((await host.api.searchNotes({ query: "🎉" })).results.map((hit) => hit.uuid)).toEqual([uuid]);
    const api = host.api as unknown as Record<string, (input: unknown) => Promise<unknown>>;
    await expect(api.notePreviews?.({ noteUuids: ["nope"] })).rejects.toThrow("notePreviews: invalid input: noteUuids.0");
  });

  it("says snapshots need the server while it is out of reach", async () => {
    await expect(host.api.listSnapshots({ noteUuid: crypto.randomUUID() })).rejects.toThrow(
      "Snapshots are kept on the server, which cannot be reached right now",
    );
  });
});
