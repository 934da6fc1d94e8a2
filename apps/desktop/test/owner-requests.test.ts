import { rm } from "node:fs/promises";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { permissionsFor } from "../src/host/bridge/owner-requests";
import type { Host } from "../src/host/host";
import { wire } from "./bridge-fixture";
import { signInAs, startTestHost, tempDir, waitFor } from "./host-harness";

/** Agent-access requests through the host's API, against a real server, as the Approvals view uses them. */
describe("agent-access requests in the host", () => {
  let ts: TestServer;
  let bob: TestUser;
  let alice: TestUser;
  let dataDir: string;
  let host: Host;

  beforeAll(async () => {
    ts = await startTestServer();
    bob = await ts.addUser("bob");
    alice = await ts.addUser("alice");
    dataDir = await tempDir("tandem-owner-requests-");
    host = await startTestHost(dataDir);
    await signInAs(host, ts, bob);
  });

  afterAll(async () => {
    await host?.close();
    await ts?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("turns the owner's choice into the server's permissions, leaving out what is not given", () => {
    expect(permissionsFor({ notes: "read", todos: "none" })).toEqual({ notesAccess: { scope: "all", access: "read" } });
    expect(permissionsFor({ notes: "none", todos: "write" })).toEqual({ todosAccess: { scope: "all", access: "write" } });
    expect(permissionsFor({ notes: "none", todos: "none" })).toEqual({});
  });

  it("lists a request, counts it as waiting, and accepts it with the chosen permissions", async () => {
    await wire(ts, alice.apiKey, "POST", "/network/request", { to: "bob_coo" });
    const [request] = await waitFor("the request listed", async () => {
      const list = await host.api.listAccessRequests();
      return list.length > 0 ? list : undefined;
    });
    expect(request).toMatchObject({ fromUsername: "alice", fromName: "alice", fromUserId: String(alice.userId) });
    await waitFor("the request counted", async () => (await host.api.getStatus()).requestsPending === 1, 30_000);

    await host.api.answerAccessRequest({ requestId: request?.requestId ?? 0, action: "accept", access: { notes: "write", todos: "none" } });
    const { network } = await wire<{ network: { contacts: { username: string; yourPermissionsToThem: unknown }[] } }>(
      ts,
      bob.apiKey,
      "GET",
      "/network",
    );
    expect(network.contacts.find((contact) => contact.username === "alice")?.yourPermissionsToThem).toEqual({
      notesAccess: { scope: "all", access: "write" },
    });
    expect(await host.api.listAccessRequests()).toEqual([]);
    await waitFor("the count back to 0", async () => (await host.api.getStatus()).requestsPending === 0);
    // Answered already: the server's refusal comes back as an error.
    await expect(host.api.answerAccessRequest({ requestId: request?.requestId ?? 0, action: "decline" })).rejects.toThrow(/already/);
  });

  it("refuses malformed answers", async () => {
    const api = host.api as unknown as Record<string, (input: unknown) => Promise<unknown>>;
    await expect(api.answerAccessRequest?.({ requestId: "x", action: "accept" })).rejects.toThrow("answerAccessRequest: invalid input");
    await expect(api.answerAccessRequest?.({ requestId: 1, action: "maybe" })).rejects.toThrow("answerAccessRequest: invalid input");
  });

  it("says what is missing when the key cannot see the network", async () => {
    const limited = await ts.addUser("nina", ["os.notes:read", "os.notes:write", "os.todos:read", "os.todos:write"]);
    await signInAs(host, ts, limited);
    await expect(host.api.listAccessRequests()).rejects.toThrow("Your API key cannot see agent-access requests (it lacks os.network:read)");
  });
});
