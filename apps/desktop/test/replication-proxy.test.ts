import { rm } from "node:fs/promises";
import { NOTE_FRAGMENT, putNote, readNotes } from "@tandem/core";
import type { RunningServer } from "@tandem/server";
import {
  POSTGRES_URL,
  REDIS_URL,
  randomRedisPrefix,
  startAnotherInstance,
  startTestServer,
  type TestServer,
  type TestUser,
} from "@tandem/server/testing";
import { type RoundRobinProxy, startRoundRobinProxy } from "@tandem/server/testing/round-robin-proxy";
import { afterAll, beforeAll, describe, it } from "vitest";
import * as Y from "yjs";
import type { Host } from "../src/host/host";
import { HubClient, startTestHost, tempDir, waitFor } from "./host-harness";

function writeParagraph(doc: Y.Doc, text: string): void {
  const paragraph = new Y.XmlElement("paragraph");
  paragraph.insert(0, [new Y.XmlText(text)]);
  doc.getXmlFragment(NOTE_FRAGMENT).push([paragraph]);
}
const bodyOf = (doc: Y.Doc) => doc.getXmlFragment(NOTE_FRAGMENT).toString();

/**
 * The desktop's replication through several server instances behind one URL (issue 24): two hosts
 * signed in through a round-robin proxy over two instances (PostgreSQL + Redis), editing online and
 * offline (the proxy stopped, then started again at the same address); every edit converges on the
 * server and on the other host.
 */
describe.skipIf(!POSTGRES_URL)("desktop replication through instances behind one URL", () => {
  let one: TestServer;
  let two: RunningServer;
  let proxy: RoundRobinProxy;
  let port: number;
  let alice: TestUser;
  const hosts: { host: Host; hub: HubClient; dataDir: string }[] = [];

  beforeAll(async () => {
    one = await startTestServer({ redisUrl: REDIS_URL, redisPrefix: randomRedisPrefix() }, "postgres");
    two = await startAnotherInstance(one);
    proxy = await startRoundRobinProxy([one.server.url, two.url]);
    port = Number(new URL(proxy.url).port);
    alice = await one.addUser("alice");
  });
  afterAll(async () => {
    for (const { host, hub, dataDir } of hosts) {
      hub.close();
      await host.close();
      await rm(dataDir, { recursive: true, force: true });
    }
    await proxy?.close();
    await two?.close();
    await one?.stop();
  });

  async function signedInHost() {
    const dataDir = await tempDir("tandem-desktop-proxy-");
    const host = await startTestHost(dataDir);
    await host.api.signInWithApiKey({ serverUrl: proxy.url, apiKey: alice.apiKey });
    const hub = new HubClient(await host.api.getLocalSync());
    hosts.push({ host, hub, dataDir });
    return { host, hub };
  }
  const state = async (host: Host) => (await host.status()).sync.state;
  /** The note's body as the server answers it through the proxy (either instance). */
  const serverBody = async (id: number) => (await alice.client.call("getNote", { params: { id } })).note.markdown;

  it("replicates a workspace from two instances, online and offline, and every edit converges on the server and the other host", async () => {
    const { note } = (await alice.client.call("createNote", { body: { title: "Shared", content: "<p>from the server</p>" } })).result;
    const [a, b] = [await signedInHost(), await signedInHost()];
    const [workspaceA, workspaceB] = [await a.hub.open(`workspace:${alice.userId}`), await b.hub.open(`workspace:${alice.userId}`)];
    await waitFor("the note in both hosts' workspaces", () => readNotes(workspaceA).has(note.uuid) && readNotes(workspaceB).has(note.uuid));
    const [noteA, noteB] = [await a.hub.open(`note:${note.uuid}`), await b.hub.open(`note:${note.uuid}`)];
    await waitFor("the body on both hosts", () => bodyOf(noteA).includes("from the server") && bodyOf(noteB).includes("from the server"));

    // Online: an edit on one host reaches the server and the other host.
    writeParagraph(noteA, "online from A");
    await waitFor("A's edit on B", () => bodyOf(noteB).includes("online from A"));
    await waitFor("A's edit on the server", async () => (await serverBody(note.id)).includes("online from A"));

    // Offline: the URL stops answering; both hosts edit, and A creates a note.
    await proxy.close();
    await waitFor("both hosts offline", async () => (await state(a.host)) === "offline" && (await state(b.host)) === "offline");
    writeParagraph(noteA, "offline from A");
    writeParagraph(noteB, "offline from B");
    const created = crypto.randomUUID();
    const now = new Date().toISOString();
    workspaceA.transact(() =>
      putNote(workspaceA, created, { title: "Written offline", folder: null, pinned: false, tags: [], createdAt: now, updatedAt: now }),
    );
    writeParagraph(await a.hub.open(`note:${created}`), "a new note, offline");
    await waitFor("the local hubs took the offline edits", () => a.hub.settled() && b.hub.settled());

    // Back at the same URL: the hosts reconnect (to either instance) and everything converges.
    proxy = await startRoundRobinProxy([one.server.url, two.url], { port });
    const lines = ["from the server", "online from A", "offline from A", "offline from B"];
    await waitFor("every edit on A", () => lines.every((line) => bodyOf(noteA).includes(line)));
    await waitFor("every edit on B", () => lines.every((line) => bodyOf(noteB).includes(line)));
    await waitFor("every edit on the server", async () => {
      const body = await serverBody(note.id);
      return lines.every((line) => body.includes(line));
    });
    await waitFor("the offline note on B", () => readNotes(workspaceB).get(created)?.title === "Written offline");
    const createdOnB = await b.hub.open(`note:${created}`);
    await waitFor("the offline note's body on B", () => bodyOf(createdOnB).includes("a new note, offline"));
    // The list is a view of the stored workspace: it follows the store (within a few seconds).
    await waitFor("the offline note in the server's list", async () =>
      (await alice.client.call("listNotes", { query: {} })).notes.some(
        (listed) => listed.uuid === created && listed.title === "Written offline",
      ),
    );

    // Online again, from B this time.
    writeParagraph(noteB, "online again from B");
    await waitFor("B's edit on A", () => bodyOf(noteA).includes("online again from B"));
    await waitFor("both hosts synced", async () => (await state(a.host)) === "synced" && (await state(b.host)) === "synced");
  });
});
