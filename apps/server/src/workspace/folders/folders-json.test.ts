import { randomUUID } from "node:crypto";
import { putFolder, workspaceDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES_URL, type StorageKind, startTestServer, type TestServer, type TestUser } from "../../../test/harness";
import { listFolders } from "./folders-service";

const storages: StorageKind[] = POSTGRES_URL ? ["sqlite", "postgres"] : ["sqlite"];

/**
 * Names no client would pick, written straight into the workspace document (sync clients are
 * not held to the REST API's name rules): every escape JSON has, control characters, quotes,
 * backslashes, line and paragraph separators, astral characters and a lone surrogate.
 */
const AWKWARD_NAMES = [
  'quote " and backslash \\ and slash /',
  // From 1: PostgreSQL's text cannot hold NUL.
  `controls ${Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join("")} and DEL \u007f`,
  "separators \u2028 \u2029, BOM \ufeff, noncharacter \uffff",
  "astral 😀 𝄞, lone surrogate \ud83d, accents é ü ß, CJK 日本語",
  "html <b>&amp;</b> 'single'",
];

describe.each(storages)("GET /os/folders on %s answers the bytes JSON.stringify makes of the folders", (storage) => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer({}, storage);
    alice = await server.addUser("alice");
    const bob = await server.addUser("bob");
    const now = new Date().toISOString();
    // Bob shares a folder with alice, so her listing holds shared rows (`shared: true`, a role) too.
    const { sync } = server.server.context;
    for (const [owner, names] of [
      [alice, AWKWARD_NAMES],
      [bob, ["Shared with alice"]],
    ] as const) {
      await sync.change(workspaceDocName(owner.userId), owner.userId, (doc) => {
        for (const name of names) putFolder(doc, randomUUID(), { name, parent: null, icon: name, createdAt: now, updatedAt: now });
      });
    }
    const { folders: bobs } = await bob.client.call("listFolders");
    await bob.client.call("shareFolder", { params: { id: bobs[0]?.id as number }, body: { username: "alice", role: "viewer" } });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it.each([
    ["all folders", "", undefined],
    ["the top level", "?parentId=root", "root"],
  ] as const)("%s", async (_, query, parent) => {
    const response = await server.fetch(`/api/v1/os/folders${query}`, { headers: { authorization: `Bearer ${alice.apiKey}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const text = await response.text();
    const folders = await listFolders(server.server.context.db, alice.userId, parent);
    expect(folders).toHaveLength(AWKWARD_NAMES.length + 1);
    expect(folders.filter((folder) => folder.shared).map((folder) => folder.role)).toEqual(["viewer"]);
    // The names made it into the listing as they are, escapes and all.
    expect(text).toContain(String.raw`controls \u0001\u0002`);
    expect(text).toBe(JSON.stringify({ success: true, folders }));
  });
});
