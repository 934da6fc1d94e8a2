import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { ALL_SCOPES, type Scope } from "@tandem/core";
import type { RunningServer } from "@tandem/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/src/auth/api-keys";
import { SIGN_IN_SCOPES } from "../../server/src/delegation/runtime/pairing-service";
import { createUser } from "../../server/src/people/users/users-service";
import type { Host } from "../src/host/host";
import { startServerAt, startTestHost, tempDir, waitFor } from "./host-harness";

/** Cheap scrypt for tests (the product uses 2^16). */
const TEST_SCRYPT = { N: 2 ** 14, r: 8, p: 1 };
const CANARY = "CANARY-host-4b1e-never-on-the-server";
const GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

const line = (value: unknown) => `${JSON.stringify(value)}\n`;

/** A Claude Code session file as the CLI writes it: `projects/<project>/<session-id>.jsonl`. */
async function claudeSession(root: string, sessionId: string, text: string): Promise<string> {
  const dir = path.join(root, "projects", "-home-ada-garden");
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${sessionId}.jsonl`);
  await writeFile(
    file,
    line({ type: "user", sessionId, message: { role: "user", content: text } }) + line({ type: "assistant", message: { content: "ok" } }),
  );
  return file;
}

/** A Codex rollout: `sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`. */
async function codexSession(root: string, uuid: string, text: string): Promise<void> {
  const dir = path.join(root, "sessions", "2026", "12", "08");
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, `rollout-2026-12-08T10-00-00-${uuid}.jsonl`),
    line({ type: "session_meta", payload: { id: uuid } }) + line({ type: "response_item", payload: { content: text } }),
  );
}

describe("the raw memory collector against a real server", () => {
  let serverDir: string;
  let server: RunningServer;
  let port: number;
  const hosts: Host[] = [];
  let serial = 0;

  async function account(name: string, scopes: readonly Scope[] = ALL_SCOPES) {
    const user = await createUser(server.context.db, { username: `${name}${++serial}` });
    const { apiKey } = await createApiKey(server.context.db, { userId: user.id, scopes });
    return { userId: user.id, apiKey };
  }

  async function host(apiKey: string, dataDir?: string) {
    const dir = dataDir ?? (await tempDir("tandem-raw-host-"));
    const roots = path.join(dir, "agents");
    const h = await startTestHost(dir, {
      rawMemory: {
        roots: { claudeCode: path.join(roots, ".claude", "projects"), codex: path.join(roots, ".codex", "sessions") },
        pollMs: 60_000,
        quietMs: 0,
        scrypt: TEST_SCRYPT,
      },
    });
    hosts.push(h);
    await h.api.signInWithApiKey({ serverUrl: server.url, apiKey });
    return { h, dir, claude: path.join(roots, ".claude"), codex: path.join(roots, ".codex") };
  }

  beforeAll(async () => {
    serverDir = await tempDir("tandem-raw-server-");
    server = await startServerAt(0, serverDir);
    port = server.port;
  });
  afterAll(async () => {
    for (const h of hosts) await h.close().catch(() => undefined);
    await server?.close();
    await rm(serverDir, { recursive: true, force: true });
  });

  it("turns on with a recovery code, captures finished sessions redacted and encrypted, once each, and searches them locally", async () => {
    const ada = await account("ada");
    const { h, claude, codex } = await host(ada.apiKey);
    expect((await h.api.getRawMemory()).state).toBe("off");
    const { recoveryCode } = await h.api.enableRawMemory();
    expect(recoveryCode).toMatch(/^[0-9A-Z-]{30,}$/);
    expect((await h.api.getRawMemory()).state).toBe("confirm-recovery");
    // Nothing is captured before "I saved it".
    await claudeSession(claude, "11111111-2222-4333-8444-555555555555", `the ${CANARY} and ${GITHUB_TOKEN}`);
    await h.rawMemory.tick();
    expect(await server.context.db.selectFrom("raw_memory_records").select("id").execute()).toEqual([]);
    await h.api.confirmRawMemoryRecovery();

    await claudeSession(claude, "11111111-2222-4333-8444-555555555555", `the ${CANARY} and ${GITHUB_TOKEN}`);
    await codexSession(codex, "019d2fac-0b38-70f0-baff-a394265d8291", "a codex session about gardens");
    await claudeSession(claude, "99999999-2222-4333-8444-555555555555", "not json at all");
    await writeFile(path.join(claude, "projects", "-home-ada-garden", "99999999-2222-4333-8444-555555555555.jsonl"), "{ broken");
    await h.rawMemory.tick();
    const status = await h.api.getRawMemory();
    expect(status.state).toBe("on");
    expect(status.captured.map((c) => c.runtime).sort()).toEqual(["claude-code", "codex"]);
    expect(status.queued).toBe(0);
    expect(status.refused).toEqual([expect.objectContaining({ runtime: "claude-code", reason: expect.stringContaining("not JSON") })]);
    expect(status.devices).toEqual([expect.objectContaining({ thisDevice: true, hasCurrentKey: true, records: 2 })]);

    // Never twice: touched again, the same session is not taken again.
    await claudeSession(claude, "11111111-2222-4333-8444-555555555555", `the ${CANARY} again`);
    await h.rawMemory.tick();
    expect((await h.api.getRawMemory()).captured).toHaveLength(2);

    // Decrypted here: the canary is found, the token is not (redacted before encryption).
    const hits = await h.api.searchRawMemory({ query: CANARY });
    expect(hits).toHaveLength(1);
    expect(hits[0]?.snippet).toContain("[REDACTED:");
    expect(await h.api.searchRawMemory({ query: GITHUB_TOKEN })).toEqual([]);
    expect(await h.api.searchRawMemory({ query: "gardens" })).toHaveLength(1);
    const rows = await server.context.db.selectFrom("raw_memory_records").select("ciphertext").execute();
    for (const row of rows) expect(Buffer.from(row.ciphertext).includes(Buffer.from(CANARY))).toBe(false);

    // A second computer: enrolled, it needs the code; with it, it reads the first one's sessions.
    const second = await host(ada.apiKey);
    expect(await second.h.api.enableRawMemory()).toEqual({ recoveryCode: null, needsRecovery: true });
    expect((await second.h.api.getRawMemory()).state).toBe("needs-recovery");
    await expect(second.h.api.recoverRawMemory({ code: "0000-0000-0000-0000-0000-0000-00" })).rejects.toThrow("not this account's");
    await second.h.api.recoverRawMemory({ code: recoveryCode ?? "" });
    expect(await second.h.api.searchRawMemory({ query: CANARY })).toHaveLength(1);

    // Forgetting the second computer: its key wraps go and the key rotates; the first keeps capturing.
    const secondId = (await second.h.api.getRawMemory()).deviceId ?? "";
    await h.api.forgetRawMemoryDevice({ deviceId: secondId });
    const after = await h.api.getRawMemory();
    expect(after.devices.map((d) => d.deviceId)).not.toContain(secondId);
    await codexSession(codex, "019d2fac-0b38-70f0-baff-a394265d8292", "after the rotation");
    await h.rawMemory.tick();
    expect(await h.api.searchRawMemory({ query: "after the rotation" })).toHaveLength(1);
    const versions = await server.context.db.selectFrom("raw_memory_records").select("key_version").orderBy("id").execute();
    expect(versions.at(-1)?.key_version).toBe(2);

    await h.api.disableRawMemory();
    expect((await h.api.getRawMemory()).state).toBe("off");
  });

  it("turns on with a pairing-code sign-in's key, and tells a key without raw memory's scopes why it cannot", async () => {
    const signedIn = await account("sy", SIGN_IN_SCOPES);
    const { h: paired } = await host(signedIn.apiKey);
    expect((await paired.api.enableRawMemory()).recoveryCode).toEqual(expect.any(String));
    expect((await paired.api.getRawMemory()).state).toBe("confirm-recovery");

    const cy = await account("cy", ["os.notes:read", "os.notes:write", "os.todos:read", "os.todos:write"]);
    const { h } = await host(cy.apiKey);
    await expect(h.api.enableRawMemory()).rejects.toThrow("os.raw-memory:read and os.raw-memory:write");
    expect((await h.api.getRawMemory()).state).toBe("off");
  });

  it("keeps its queue on disk through an outage and a restart, and uploads each session once", async () => {
    const bo = await account("bo");
    const first = await host(bo.apiKey);
    await first.h.api.enableRawMemory();
    await first.h.api.confirmRawMemoryRecovery();
    await first.h.rawMemory.tick();

    // The server goes away; a session finishes meanwhile: sealed into the queue, not lost.
    await server.close();
    await claudeSession(first.claude, "aaaaaaaa-2222-4333-8444-555555555555", "written while offline");
    await first.h.rawMemory.tick();
    const queue = path.join(first.dir, "raw-memory", "queue");
    expect(await readdir(queue)).toHaveLength(1);
    await first.h.close();

    server = await startServerAt(port, serverDir);
    const again = await host(bo.apiKey, first.dir);
    await waitFor("the queued session to upload", async () => {
      await again.h.rawMemory.tick();
      return (await again.h.api.getRawMemory()).captured.length === 1;
    });
    expect(await readdir(queue)).toEqual([]);
    await again.h.rawMemory.tick();
    const rows = await server.context.db.selectFrom("raw_memory_records").select("id").where("owner_id", "=", bo.userId).execute();
    expect(rows).toHaveLength(1);
    expect(await again.h.api.searchRawMemory({ query: "written while offline" })).toHaveLength(1);
  });
});
