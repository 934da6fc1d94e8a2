import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import * as Y from "yjs";
import { startTestServer, type TestServer } from "./harness";

/** Opens a document over real WebSockets and answers how the server responded. */
async function tryOpen(url: string, token: string, documentName: string): Promise<{ outcome: "synced" | "refused"; reason?: string }> {
  const socket = new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: WebSocket as never });
  try {
    return await new Promise((resolve) => {
      const provider = new HocuspocusProvider({
        websocketProvider: socket,
        name: documentName,
        document: new Y.Doc(),
        token,
        onSynced: () => resolve({ outcome: "synced" }),
        onAuthenticationFailed: ({ reason }) => resolve({ outcome: "refused", reason }),
      });
      provider.attach();
    });
  } finally {
    socket.destroy();
  }
}

describe("sync hub at /sync", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  it("refuses a connection whose token is not a credential", async () => {
    const result = await tryOpen(t.server.syncUrl, "svc_sk_not-a-real-key", "workspace:1");
    expect(result.outcome).toBe("refused");
  });

  it("refuses every document until document kinds exist, even with a valid key (fail closed)", async () => {
    const alice = await t.addUser("alice");
    const result = await tryOpen(t.server.syncUrl, alice.apiKey, `workspace:${alice.userId}`);
    expect(result.outcome).toBe("refused");
  });

  it("answers upgrades on other paths with 404 and keeps serving", async () => {
    const socket = new WebSocket(`${t.server.url.replace("http", "ws")}/elsewhere`);
    const status = await new Promise<number | undefined>((resolve) => {
      socket.on("unexpected-response", (_request, response) => resolve(response.statusCode));
      socket.on("error", () => resolve(undefined));
    });
    expect(status).toBe(404);
    expect((await t.fetch("/healthz")).status).toBe(200);
  });
});
