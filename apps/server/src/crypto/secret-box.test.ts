import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SecretBox } from "./secret-box";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("SecretBox", () => {
  it("round-trips, and refuses another purpose, another key or an altered value", async () => {
    const box = SecretBox.fromSecret("a secret of the operator");
    const sealed = box.seal("refresh-token-123", "mcp.refresh_token");
    expect(sealed).not.toContain("refresh-token-123");
    expect(box.open(sealed, "mcp.refresh_token")).toBe("refresh-token-123");
    expect(() => box.open(sealed, "mcp.access_token")).toThrow();
    expect(() => SecretBox.fromSecret("another secret entirely").open(sealed, "mcp.refresh_token")).toThrow();
    const parts = sealed.split(".");
    parts[3] = Buffer.from("tampered").toString("base64url");
    expect(() => box.open(parts.join("."), "mcp.refresh_token")).toThrow();
    expect(box.seal("x", "p")).not.toBe(box.seal("x", "p"));
  });

  it("creates one key file in the data directory, readable by the owner only, and reuses it", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-secret-"));
    dirs.push(dataDir);
    const [first, second] = await Promise.all([SecretBox.load({ dataDir }), SecretBox.load({ dataDir })]);
    expect(second.open(first.seal("hello", "test"), "test")).toBe("hello");
    const again = await SecretBox.load({ dataDir });
    expect(again.open(first.seal("hello", "test"), "test")).toBe("hello");
    expect((await stat(path.join(dataDir, "secret.key"))).mode & 0o777).toBe(0o600);
  });

  it("makes a MAC that only its key and purpose make again", () => {
    const box = SecretBox.fromSecret("a secret of sixteen or more");
    const mac = box.mac("state-1", "mcp.oauth.confirm");
    expect(mac).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(box.mac("state-1", "mcp.oauth.confirm")).toBe(mac);
    expect(box.mac("state-2", "mcp.oauth.confirm")).not.toBe(mac);
    expect(box.mac("state-1", "another purpose")).not.toBe(mac);
    expect(SecretBox.fromSecret("another secret of sixteen").mac("state-1", "mcp.oauth.confirm")).not.toBe(mac);
  });

  it("refuses a short operator secret", () => {
    expect(() => SecretBox.fromSecret("short")).toThrow(/16 characters/);
  });
});
