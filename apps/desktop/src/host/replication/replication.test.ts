import { rm } from "node:fs/promises";
import { NOTE_FRAGMENT, putNote, readNotes, removeNote } from "@tandem/core";
import type { RunningServer } from "@tandem/server";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as Y from "yjs";
import { HubClient, signInAs, startServerAt, startTestHost, tempDir, waitFor } from "../../../test/host-harness";
import type { Host } from "../host";
import { type PullDocuments, pullNotes } from "./note-pull";

const now = () => new Date().toISOString();

/** The note's body as the server holds it, as plain text. */
async function serverNoteText(ts: TestServer, uuid: string): Promise<string> {
  const doc = await ts.server.context.sync.getDoc(`note:${uuid}`);
  return doc.getXmlFragment(NOTE_FRAGMENT).toString();
}

function writeParagraph(doc: Y.Doc, text: string): void {
  doc.transact(() => {
    const paragraph = new Y.XmlElement("paragraph");
    paragraph.insert(0, [new Y.XmlText(text)]);
    const fragment = doc.getXmlFragment(NOTE_FRAGMENT);
    fragment.insert(fragment.length, [paragraph]);
  });
}

describe("replication between the local hub and the server", () => {
  let ts: TestServer;
  let user: TestUser;
  let dataDir: string;
  let host: Host | undefined;
  let hub: HubClient | undefined;

  beforeAll(async () => {
    ts = await startTestServer();
    user = await ts.addUser("ada");
  });

  afterEach(async () => {
    hub?.close();
    hub = undefined;
    await host?.close();
    host = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  afterAll(async () => {
    await ts?.stop();
  });

  async function signedInHost(): Promise<{ host: Host; hub: HubClient }> {
    dataDir = await tempDir("tandem-desktop-sync-");
    host = await startTestHost(dataDir);
    await signInAs(host, ts, user);
    hub = new HubClient(await host.api.getLocalSync());
    return { host, hub };
  }

  it("closes cleanly right after signing in, while the socket to the server is still connecting", async () => {
    // ws emits `error` for a socket closed while connecting; unheard, it would end the process.
    for (let round = 0; round < 3; round++) {
      const roundDir = await tempDir("tandem-desktop-close-");
      const running = await startTestHost(roundDir);
      await signInAs(running, ts, user);
      await running.close();
      await rm(roundDir, { recursive: true, force: true });
    }
  });

  it("sends a note created and typed through the local hub to the server", async () => {
    const { host, hub } = await signedInHost();
    const sync = await host.api.getLocalSync();
    expect(sync).toMatchObject({ userId: user.userId, workspaceDoc: `workspace:${user.userId}`, todosDoc: `todos:${user.userId}` });
    expect(sync.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);

    const workspace = await hub.open(sync.workspaceDoc);
    const uuid = crypto.randomUUID();
    workspace.transact(() =>
      putNote(workspace, uuid, { title: "From the desktop", folder: null, pinned: false, tags: [], createdAt: now(), updatedAt: now() }),
    );
    writeParagraph(await hub.open(`note:${uuid}`), "typed offline-first");

    const listed = await waitFor("the note in the server's list", async () => {
      const { notes } = await user.client.call("listNotes", { query: {} });
      return notes.find((note) => note.uuid === uuid);
    });
    expect(listed.title).toBe("From the desktop");
    await waitFor("the body on the server", async () => (await serverNoteText(ts, uuid)).includes("typed offline-first"));
    await waitFor("synced", async () => (await host.api.getStatus()).sync.state === "synced");
  });

  it("brings a REST change made on the server to the open local document", async () => {
    const { title } = { title: "Written by REST" };
    const created = await user.client.call("createNote", { body: { title, content: "first version" } });
    const { uuid, id } = created.result.note;
    const { hub, host } = await signedInHost();
    const sync = await host.api.getLocalSync();
    const workspace = await hub.open(sync.workspaceDoc);
    await waitFor("the REST note in the local workspace", () => readNotes(workspace).has(uuid));
    const note = await hub.open(`note:${uuid}`);
    await waitFor("the REST body locally", () => note.getXmlFragment(NOTE_FRAGMENT).toString().includes("first version"));

    await user.client.call("updateNote", { params: { id }, body: { content: "<p>second version</p>" } });
    await waitFor("the PATCH in the open document", () => note.getXmlFragment(NOTE_FRAGMENT).toString().includes("second version"));
  });

  it("replicates every note of a workspace with 160 notes, and again after the server restarts, in bounded turns", async () => {
    const server = await startTestServer();
    const many = await server.addUser("many");
    let restarted: RunningServer | undefined;
    const warnings = vi.spyOn(console, "warn");
    try {
      const uuids: string[] = [];
      for (let index = 0; index < 160; index++) {
        const created = await many.client.call("createNote", { body: { title: `Note ${index}`, content: `body number ${index}` } });
        uuids.push(created.result.note.uuid);
      }
      dataDir = await tempDir("tandem-desktop-sync-");
      const running = await startTestHost(dataDir);
      host = running;
      const states: string[] = [];
      running.context.events.on("status", () => void running.status().then((status) => states.push(status.sync.state)));
      await signInAs(running, server, many);
      const synced = async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 162 ? sync : undefined;
      };
      expect(await waitFor("all 162 documents synced", synced, 60_000)).toEqual({
        state: "synced",
        pending: 0,
        documents: 162,
        message: null,
      });
      // Pulled 500 a request, 160 notes can be through before a status event goes out: "syncing" may never be
      // announced; what must not be is an error on the way.
      expect(states).not.toContain("error");

      // After a reconnect all 162 documents want to authenticate at once: the server would close a
      // socket with more than 100 waiting, so they go in turns.
      const port = server.server.port;
      await server.server.close();
      await waitFor("offline", async () => (await running.status()).sync.state === "offline");
      restarted = await startServerAt(port, server.dataDir);
      await waitFor("all 162 documents synced again", synced, 60_000);
      expect(warnings.mock.calls.flat().join(" ")).not.toMatch(/too many pending/);

      // Every body is on this machine: read them from the local database.
      const rows = await running.context.store.db.selectFrom("documents").select(["name", "state"]).execute();
      const bodies = new Map(rows.map((row) => [row.name, row.state]));
      for (const [index, uuid] of uuids.entries()) {
        const doc = new Y.Doc();
        Y.applyUpdate(doc, bodies.get(`note:${uuid}`) ?? new Uint8Array());
        expect(doc.getXmlFragment(NOTE_FRAGMENT).toString()).toContain(`body number ${index}`);
      }
    } finally {
      warnings.mockRestore();
      await host?.close();
      host = undefined;
      await restarted?.close();
      await rm(server.dataDir, { recursive: true, force: true });
    }
  });

  /** Every note's body as stored on this machine, by uuid. */
  async function storedBodies(running: Host): Promise<Map<string, string>> {
    const rows = await running.context.store.db.selectFrom("documents").select(["name", "state"]).where("name", "like", "note:%").execute();
    return new Map(
      rows.map((row) => {
        const doc = new Y.Doc();
        Y.applyUpdate(doc, row.state);
        return [row.name.slice("note:".length), doc.getXmlFragment(NOTE_FRAGMENT).toString()];
      }),
    );
  }

  it("keeps only used and recently used notes open, catches up on notes changed on the server while closed, and opens none at a restart when nothing changed", async () => {
    const server = await startTestServer();
    const owner = await server.addUser("large");
    try {
      const notes: { id: number; uuid: string }[] = [];
      for (let index = 0; index < 60; index++) {
        notes.push((await owner.client.call("createNote", { body: { title: `Note ${index}`, content: `body ${index}` } })).result.note);
      }
      dataDir = await tempDir("tandem-desktop-large-");
      // No overlap: the test's notes are all stored within the default one.
      const replication = { keepOpen: 5, catchUpIntervalMs: 200, catchUpOverlapMs: 0 };
      let running = await startTestHost(dataDir, { replication });
      host = running;
      await signInAs(running, server, owner);
      await waitFor("62 documents synced", async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 62;
      });
      // The workspace, the todos and at most `keepOpen` notes stay open here; the server let go of the rest too.
      await waitFor("notes closed once through", () => running.openDocuments() <= 2 + 5);
      await waitFor("the server's copies closed", () => server.server.context.sync.hocuspocus.getDocumentsCount() <= 2 + 5);
      await waitFor("every body on this machine", async () => {
        const bodies = await storedBodies(running);
        return notes.every((note, index) => bodies.get(note.uuid)?.includes(`body ${index}`));
      });

      // Changed on the server while closed here: the next catch-up brings it, and it closes again.
      const [changed] = notes;
      if (!changed) throw new Error("60 notes were created");
      await owner.client.call("updateNote", { params: { id: changed.id }, body: { content: "<p>changed on the server</p>" } });
      await waitFor("the change on this machine", async () =>
        (await storedBodies(running)).get(changed.uuid)?.includes("changed on the server"),
      );

      // A note the renderer opens replicates live while open.
      const hubClient = new HubClient(await running.api.getLocalSync());
      hub = hubClient;
      const open = await hubClient.open(`note:${changed.uuid}`);
      await owner.client.call("updateNote", { params: { id: changed.id }, body: { content: "<p>live while open</p>" } });
      await waitFor("the edit live in the open note", () => open.getXmlFragment(NOTE_FRAGMENT).toString().includes("live while open"));
      hubClient.close();
      hub = undefined;
      await waitFor("synced", async () => (await running.status()).sync.state === "synced");
      // The server may store the note once more after the edit; the catch-up position passes that store.
      await waitFor("caught up with the server's last store", async () => {
        const latest = await server.server.context.db
          .selectFrom("documents")
          .select((eb) => eb.fn.max("updated_at").as("latest"))
          .where("name", "like", "note:%")
          .executeTakeFirst();
        const saved = await running.context.store.getSetting(`replication.cursor:${server.server.url}#${owner.userId}`);
        return saved !== null && JSON.parse(saved).since === latest?.latest;
      });

      // A restart with nothing changed opens no note: the feed names nothing new.
      await running.close();
      running = await startTestHost(dataDir, { replication });
      host = running;
      await waitFor("synced after the restart", async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 62;
      });
      await new Promise((resolve) => setTimeout(resolve, 600)); // a few catch-ups
      expect(running.openDocuments()).toBe(2);
    } finally {
      await host?.close();
      host = undefined;
      await server.stop();
    }
  });

  it("brings notes in, and a change made on the server to a closed note, by pulls: no note is held in memory here or on the server", async () => {
    const server = await startTestServer();
    const owner = await server.addUser("stored");
    let sampler: ReturnType<typeof setInterval> | undefined;
    let mostOnServer = 0;
    try {
      const notes: { id: number; uuid: string }[] = [];
      for (let index = 0; index < 30; index++) {
        notes.push((await owner.client.call("createNote", { body: { title: `Note ${index}`, content: `body ${index}` } })).result.note);
      }
      dataDir = await tempDir("tandem-desktop-stored-");
      const running = await startTestHost(dataDir, { replication: { catchUpIntervalMs: 200, catchUpOverlapMs: 0 } });
      host = running;
      // The hub holds the workspace and the todos; no note is ever opened to replicate it.
      let mostOpen = 0;
      sampler = setInterval(() => {
        mostOpen = Math.max(mostOpen, running.openDocuments());
        mostOnServer = Math.max(mostOnServer, server.server.context.sync.hocuspocus.getDocumentsCount());
      }, 5);
      await signInAs(running, server, owner);
      await waitFor("32 documents synced", async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 32;
      });
      const bodies = await storedBodies(running);
      for (const [index, note] of notes.entries()) expect(bodies.get(note.uuid)).toContain(`body ${index}`);
      // The server let go of its copies too: each exchange ends with a close.
      await waitFor("the server's copies closed", () => server.server.context.sync.hocuspocus.getDocumentsCount() <= 2);

      const [changed] = notes;
      if (!changed) throw new Error("30 notes were created");
      await owner.client.call("updateNote", { params: { id: changed.id }, body: { content: "<p>changed on the server</p>" } });
      await waitFor("the change on this machine", async () =>
        (await storedBodies(running)).get(changed.uuid)?.includes("changed on the server"),
      );
      await waitFor("synced", async () => (await running.status()).sync.state === "synced");
      expect(mostOpen).toBe(2);
      // The server never loaded a note either (the REST change loads one for a moment): pulls read stored bytes.
      expect(mostOnServer).toBeLessThanOrEqual(3);
      expect(running.unsyncedDocuments()).toBe(0);
    } finally {
      clearInterval(sampler);
      await host?.close();
      host = undefined;
      await server.stop();
    }
  });

  it("without pulls (as against a server without them) exchanges each note over sync from its stored bytes", async () => {
    const server = await startTestServer();
    const owner = await server.addUser("exchanged");
    let sampler: ReturnType<typeof setInterval> | undefined;
    let mostOnServer = 0;
    try {
      const notes: { id: number; uuid: string }[] = [];
      for (let index = 0; index < 20; index++) {
        notes.push((await owner.client.call("createNote", { body: { title: `Note ${index}`, content: `body ${index}` } })).result.note);
      }
      dataDir = await tempDir("tandem-desktop-exchanged-");
      const running = await startTestHost(dataDir, { replication: { pull: false } });
      host = running;
      sampler = setInterval(() => {
        mostOnServer = Math.max(mostOnServer, server.server.context.sync.hocuspocus.getDocumentsCount());
      }, 5);
      await signInAs(running, server, owner);
      await waitFor("22 documents synced", async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 22;
      });
      await waitFor("every body stored", async () => {
        const bodies = await storedBodies(running);
        return notes.every((note, index) => bodies.get(note.uuid)?.includes(`body ${index}`));
      });
      expect(mostOnServer).toBeGreaterThan(2);
      await waitFor("the server's copies closed", () => server.server.context.sync.hocuspocus.getDocumentsCount() <= 2);
      expect(running.openDocuments()).toBe(2);
    } finally {
      clearInterval(sampler);
      await host?.close();
      host = undefined;
      await server.stop();
    }
  });

  it("pulls what the server has beyond a stored copy, and leaves a copy with something the server lacks to sync", async () => {
    const created = await user.client.call("createNote", { body: { title: "Pulled", content: "from the server" } });
    const name = `note:${created.result.note.uuid}`;
    const pull: PullDocuments = (documents) => user.client.call("pullDocuments", { body: { documents } });
    const server = await ts.server.context.sync.getDoc(name);
    const behind = new Y.Doc();
    const ahead = new Y.Doc();
    Y.applyUpdate(ahead, Y.encodeStateAsUpdate(server));
    writeParagraph(ahead, "only on this machine");
    const outcomes = await pullNotes(
      pull,
      new Map([
        [name, Y.encodeStateAsUpdate(behind)],
        ["note:00000000-0000-4000-8000-000000000000", undefined],
      ]),
    );
    const pulled = outcomes.get(name);
    if (pulled?.kind !== "pulled" || !pulled.update) throw new Error(`expected the note's content, got ${JSON.stringify(pulled)}`);
    Y.applyUpdate(behind, pulled.update);
    expect(behind.getXmlFragment(NOTE_FRAGMENT).toString()).toContain("from the server");
    // Nobody owns that one: left to sync, which decides.
    expect(outcomes.get("note:00000000-0000-4000-8000-000000000000")).toEqual({ kind: "exchange" });
    // Already in step: nothing to merge.
    expect((await pullNotes(pull, new Map([[name, Y.encodeStateAsUpdate(behind)]]))).get(name)).toEqual({ kind: "pulled", update: null });
    // Ahead of the server: the exchange over sync sends what it lacks.
    expect((await pullNotes(pull, new Map([[name, Y.encodeStateAsUpdate(ahead)]]))).get(name)).toEqual({ kind: "exchange" });
  });

  it("does not exchange again, at every catch-up, notes it has that were stored just before the feed's latest position", async () => {
    // Notes stored within the overlap every catch-up reads again: before, each catch-up opened them all again.
    const server = await startTestServer();
    const owner = await server.addUser("overlap");
    let sampler: ReturnType<typeof setInterval> | undefined;
    try {
      for (let index = 0; index < 20; index++) {
        await owner.client.call("createNote", { body: { title: `Note ${index}`, content: `body ${index}` } });
      }
      dataDir = await tempDir("tandem-desktop-overlap-");
      const running = await startTestHost(dataDir, { replication: { catchUpIntervalMs: 100 } });
      host = running;
      await signInAs(running, server, owner);
      await waitFor("22 documents synced", async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 22;
      });
      await waitFor("the server's copies closed", () => server.server.context.sync.hocuspocus.getDocumentsCount() <= 2);
      let mostOpen = 0;
      sampler = setInterval(() => {
        mostOpen = Math.max(mostOpen, server.server.context.sync.hocuspocus.getDocumentsCount());
      }, 2);
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // about ten catch-ups
      expect(mostOpen).toBe(2);
      expect((await running.status()).sync.state).toBe("synced");
    } finally {
      clearInterval(sampler);
      await host?.close();
      host = undefined;
      await server.stop();
    }
  });

  it("merges an offline edit to a note no longer in memory with a change made on the server meanwhile", async () => {
    const server = await startTestServer();
    const mia = await server.addUser("mia");
    let restarted: RunningServer | undefined;
    try {
      const created = await mia.client.call("createNote", { body: { title: "Shared", content: "<p>first draft</p>" } });
      const { id, uuid } = created.result.note;
      dataDir = await tempDir("tandem-desktop-merge-");
      // Nothing kept open once used: the note leaves memory as soon as the renderer closes it.
      const replication = { keepOpen: 0 };
      let running = await startTestHost(dataDir, { replication });
      host = running;
      await signInAs(running, server, mia);
      await waitFor("synced", async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 3;
      });

      const port = server.server.port;
      await server.server.close();
      await waitFor("offline", async () => (await running.status()).sync.state === "offline");
      hub = new HubClient(await running.api.getLocalSync());
      writeParagraph(await hub.open(`note:${uuid}`), "typed offline");
      await waitFor("the edit in the hub", () => hub?.settled());
      hub.close();
      hub = undefined;
      await waitFor("the note out of memory", () => running.openDocuments() === 2);
      expect(running.unsyncedDocuments()).toBe(1);
      await running.close();

      // Meanwhile, on the server: the same note is rewritten.
      restarted = await startServerAt(port, server.dataDir);
      await mia.client.call("updateNote", { params: { id }, body: { content: "<p>rewritten on the server</p>" } });

      running = await startTestHost(dataDir, { replication });
      host = running;
      await waitFor("synced", async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 3 && running.unsyncedDocuments() === 0;
      });
      const onServer = (await restarted.context.sync.getDoc(`note:${uuid}`)).getXmlFragment(NOTE_FRAGMENT).toString();
      expect(onServer).toContain("typed offline");
      expect(onServer).toContain("rewritten on the server");
      expect(onServer).not.toContain("first draft");
      // On disk here too (an exchange does not wait for its store; it follows within a batch).
      const here = await waitFor("both edits stored here", async () => {
        const body = (await storedBodies(running)).get(uuid);
        return body?.includes("rewritten on the server") ? body : undefined;
      });
      expect(here).toContain("typed offline");
      expect(running.openDocuments()).toBe(2);
    } finally {
      hub?.close();
      hub = undefined;
      await host?.close();
      host = undefined;
      await restarted?.close();
      await rm(server.dataDir, { recursive: true, force: true });
    }
  });

  it("holds replication back for a moment after a cold start with a saved session, and connects at once on sign-in", async () => {
    const server = await startTestServer();
    const kim = await server.addUser("kim");
    try {
      dataDir = await tempDir("tandem-desktop-cold-");
      // The delay is only for a start with a saved session: a sign-in syncs at once, whatever it is.
      let running = await startTestHost(dataDir, { replication: { coldStartConnectDelayMs: 10 * 60_000 } });
      host = running;
      await signInAs(running, server, kim);
      await waitFor("synced after sign-in", async () => (await running.status()).sync.state === "synced");
      await running.close();

      const starting = Date.now();
      running = await startTestHost(dataDir, { replication: { coldStartConnectDelayMs: 1_500 } });
      host = running;
      // The server is up, but the first view has the machine to itself for a moment.
      expect((await running.status()).sync.state).toBe("offline");
      await new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() - starting)));
      expect((await running.status()).sync.state).toBe("offline");
      await waitFor("synced once connected", async () => (await running.status()).sync.state === "synced");
      expect(Date.now() - starting).toBeGreaterThanOrEqual(1_500);
    } finally {
      await host?.close();
      host = undefined;
      await server.stop();
    }
  });

  it("keeps edits made offline across a restart of the host, and sends them when the server is back", async () => {
    const server = await startTestServer();
    const grace = await server.addUser("grace");
    let restarted: RunningServer | undefined;
    try {
      dataDir = await tempDir("tandem-desktop-sync-");
      let running = await startTestHost(dataDir);
      host = running;
      await signInAs(running, server, grace);
      let sync = await running.api.getLocalSync();
      hub = new HubClient(sync);
      const workspace = await hub.open(sync.workspaceDoc);
      const uuid = crypto.randomUUID();
      workspace.transact(() =>
        putNote(workspace, uuid, { title: "Travel", folder: null, pinned: false, tags: [], createdAt: now(), updatedAt: now() }),
      );
      writeParagraph(await hub.open(`note:${uuid}`), "written online");
      await waitFor("synced", async () => (await running.status()).sync.state === "synced");
      expect(running.unsyncedDocuments()).toBe(0);

      const port = server.server.port;
      await server.server.close();
      await waitFor("offline", async () => (await running.status()).sync.state === "offline");
      writeParagraph(await hub.open(`note:${uuid}`), "written on the train");
      await waitFor("the edit in the hub", () => hub?.settled());
      await waitFor("one unsynced document", () => running.unsyncedDocuments() === 1);
      expect((await running.status()).sync).toMatchObject({ state: "offline", pending: 1 });

      hub.close();
      hub = undefined;
      await running.close();
      running = await startTestHost(dataDir);
      host = running;
      await waitFor("the unsynced flag read back from disk", () => running.unsyncedDocuments() === 1);
      sync = await running.api.getLocalSync();
      hub = new HubClient(sync);
      const note = await hub.open(`note:${uuid}`);
      expect(note.getXmlFragment(NOTE_FRAGMENT).toString()).toContain("written on the train");
      expect((await running.status()).sync.state).toBe("offline");

      restarted = await startServerAt(port, server.dataDir);
      const onServer = async () => (await restarted?.context.sync.getDoc(`note:${uuid}`))?.getXmlFragment(NOTE_FRAGMENT).toString();
      await waitFor("the offline edit on the server", async () => (await onServer())?.includes("written on the train"), 60_000);
      expect(await onServer()).toContain("written online");
      await waitFor("synced", async () => (await running.status()).sync.state === "synced");
      expect(running.unsyncedDocuments()).toBe(0);
    } finally {
      hub?.close();
      hub = undefined;
      await host?.close();
      host = undefined;
      await restarted?.close();
      await rm(server.dataDir, { recursive: true, force: true });
    }
  });

  it("counts a note edited offline as unsynced after a restart without opening it, and sends it once the server is back", async () => {
    // Notes open for replication only while the server is reachable: after an offline restart the
    // note below is never opened (not by the renderer either); the stored mark alone counts it.
    const server = await startTestServer();
    const lin = await server.addUser("lin");
    let restarted: RunningServer | undefined;
    try {
      const uuids: string[] = [];
      for (let index = 0; index < 3; index++) {
        const created = await lin.client.call("createNote", { body: { title: `Note ${index}`, content: `body ${index}` } });
        uuids.push(created.result.note.uuid);
      }
      const edited = uuids[1] ?? "";
      dataDir = await tempDir("tandem-desktop-sync-");
      let running = await startTestHost(dataDir);
      host = running;
      await signInAs(running, server, lin);
      await waitFor("synced", async () => {
        const { sync } = await running.status();
        return sync.state === "synced" && sync.documents === 5;
      });

      const port = server.server.port;
      await server.server.close();
      await waitFor("offline", async () => (await running.status()).sync.state === "offline");
      hub = new HubClient(await running.api.getLocalSync());
      writeParagraph(await hub.open(`note:${edited}`), "edited offline");
      await waitFor("the edit in the hub", () => hub?.settled());
      await waitFor("one unsynced document", () => running.unsyncedDocuments() === 1);
      hub.close();
      hub = undefined;
      await running.close();

      running = await startTestHost(dataDir);
      host = running;
      await waitFor("every document counted, one unsynced", async () => {
        const { sync } = await running.status();
        return sync.documents === 5 && running.unsyncedDocuments() === 1;
      });
      expect((await running.status()).sync).toMatchObject({ state: "offline", pending: 1, documents: 5 });

      restarted = await startServerAt(port, server.dataDir);
      const onServer = async () => (await restarted?.context.sync.getDoc(`note:${edited}`))?.getXmlFragment(NOTE_FRAGMENT).toString();
      await waitFor("the offline edit on the server", async () => (await onServer())?.includes("edited offline"), 60_000);
      await waitFor("synced", async () => (await running.status()).sync.state === "synced");
      expect(running.unsyncedDocuments()).toBe(0);
      expect((await running.status()).sync).toMatchObject({ state: "synced", pending: 0, documents: 5 });
    } finally {
      await host?.close();
      host = undefined;
      await restarted?.close();
      await rm(server.dataDir, { recursive: true, force: true });
    }
  });

  it("stops replicating a note removed from the workspace, and starts on one added on the server", async () => {
    const { host, hub } = await signedInHost();
    const sync = await host.api.getLocalSync();
    const workspace = await hub.open(sync.workspaceDoc);
    await waitFor("synced", async () => (await host.api.getStatus()).sync.state === "synced");
    const before = (await host.api.getStatus()).sync.documents;

    const created = await user.client.call("createNote", { body: { title: "Added remotely", content: "remote body" } });
    await waitFor("one more document", async () => (await host.api.getStatus()).sync.documents === before + 1);
    await waitFor("synced", async () => (await host.api.getStatus()).sync.state === "synced");

    workspace.transact(() => removeNote(workspace, created.result.note.uuid));
    await waitFor("one document less", async () => (await host.api.getStatus()).sync.documents === before);
    await waitFor("the removal on the server", async () => {
      const { notes } = await user.client.call("listNotes", { query: {} });
      return !notes.some((note) => note.uuid === created.result.note.uuid);
    });
  });

  it("reports an error, and why, when the server refuses the saved key", async () => {
    const revoked = await ts.addUser("revoked");
    dataDir = await tempDir("tandem-desktop-sync-");
    let running = await startTestHost(dataDir);
    host = running;
    await signInAs(running, ts, revoked);
    await waitFor("synced", async () => (await running.status()).sync.state === "synced");
    await running.close();
    await ts.server.context.db.updateTable("api_keys").set({ revoked_at: now() }).where("user_id", "=", revoked.userId).execute();

    running = await startTestHost(dataDir);
    host = running;
    const status = await waitFor("the error explained", async () => {
      const { sync } = await running.status();
      return sync.state === "error" && sync.message?.includes("no longer accepts") ? sync : undefined;
    });
    expect(status.message).toBe("The server no longer accepts this app's API key (revoked or expired): sign out and sign in again");
    // The local copy is still there to read and edit.
    const hubClient = new HubClient(await running.api.getLocalSync());
    hub = hubClient;
    await hubClient.open(`workspace:${revoked.userId}`);
  });
});
