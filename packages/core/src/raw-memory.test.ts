import { describe, expect, it } from "vitest";
import {
  decryptRecord,
  encryptRecord,
  newAccountKey,
  newKeyPair,
  newRecoveryCode,
  newRecoveryParams,
  normalizeRecoveryCode,
  recoveryKeyPair,
  sessionIdHash,
  unwrapAccountKey,
  wrapAccountKey,
} from "./raw-memory-crypto";
import { redactJsonl, redactText } from "./secret-patterns";

describe("raw memory crypto", () => {
  it("wraps an account key for one recipient and version only", () => {
    const device = newKeyPair();
    const other = newKeyPair();
    const key = newAccountKey();
    const wrapped = wrapAccountKey(key, device.publicKey, "dev-1", 3);
    expect(wrapped).toHaveLength(104);
    expect(unwrapAccountKey(wrapped, device.privateKey, "dev-1", 3)).toEqual(key);
    expect(() => unwrapAccountKey(wrapped, other.privateKey, "dev-1", 3)).toThrow();
    expect(() => unwrapAccountKey(wrapped, device.privateKey, "dev-2", 3)).toThrow();
    expect(() => unwrapAccountKey(wrapped, device.privateKey, "dev-1", 4)).toThrow();
    const altered = wrapped.slice();
    altered[60] = (altered[60] ?? 0) ^ 1;
    expect(() => unwrapAccountKey(altered, device.privateKey, "dev-1", 3)).toThrow();
  });

  it("derives the same recovery key pair from the code however it is typed", async () => {
    const code = newRecoveryCode();
    expect(code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{1,4}){6}$/);
    const params = newRecoveryParams({ N: 2 ** 14, r: 8, p: 1 });
    const a = await recoveryKeyPair(code, params);
    const b = await recoveryKeyPair(` ${code.toLowerCase().replace(/-/g, " ")} `, params);
    expect(b.publicKey).toEqual(a.publicKey);
    expect(normalizeRecoveryCode("o0-il")).toBe("0011");
    const c = await recoveryKeyPair(code, newRecoveryParams({ N: 2 ** 14, r: 8, p: 1 }));
    expect(c.publicKey).not.toEqual(a.publicKey);
  });

  it("binds a record's ciphertext to its metadata", () => {
    const key = newAccountKey();
    const binding = {
      recordId: "r1",
      deviceId: "d1",
      runtime: "codex" as const,
      sessionIdHash: sessionIdHash("codex", "s1"),
      createdAt: "2026-12-01T00:00:00.000Z",
      keyVersion: 1,
    };
    const plaintext = new TextEncoder().encode("hello");
    const sealed = encryptRecord(key, binding, plaintext);
    expect(sealed.ciphertext).toHaveLength(plaintext.length + 16);
    const full = { ...binding, plaintextBytes: sealed.plaintextBytes };
    expect(decryptRecord(key, full, sealed.nonce, sealed.ciphertext)).toEqual(plaintext);
    for (const change of [
      { deviceId: "d2" },
      { recordId: "r2" },
      { keyVersion: 2 },
      { plaintextBytes: 6 },
      { runtime: "claude-code" as const },
    ]) {
      expect(() => decryptRecord(key, { ...full, ...change }, sealed.nonce, sealed.ciphertext)).toThrow();
    }
    expect(() => decryptRecord(newAccountKey(), full, sealed.nonce, sealed.ciphertext)).toThrow();
    expect(sessionIdHash("codex", "s1")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("session redaction", () => {
  const line = (value: unknown) => JSON.stringify(value);

  it("redacts common token formats in every string and credential-named keys' values", () => {
    const secrets = [
      "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "AKIAABCDEFGHIJKLMNOP",
      "xoxb-1234567890-abcdefghij",
      "sk_live_abcdefghijklmnop1234",
      "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
      "npm_abcdefghijklmnopqrstuvwxyz0123456789",
      "glpat-abcdefghijklmnopqrst",
      "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
      "svc_sk_abc123",
      "postgres://admin:hunter2@db.example.com/app",
    ];
    const text = [
      line({ type: "user", message: { content: `keys: ${secrets.join(" and ")}` } }),
      line({ type: "tool", output: "OPENAI_API_KEY=abcdef0123456789\nexport GITHUB_TOKEN='zzzzzzzzzzzz'" }),
      line({ type: "tool", env: { DB_PASSWORD: "plain words", apiKey: "x" } }),
      line({ type: "tool", output: "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----\nafter" }),
      "",
    ].join("\n");
    const result = redactJsonl(text);
    if (!result.ok) throw new Error(result.reason);
    for (const secret of secrets) expect(result.text).not.toContain(secret);
    for (const gone of ["abcdef0123456789", "zzzzzzzzzzzz", "plain words", "MIIEabc", "hunter2"]) expect(result.text).not.toContain(gone);
    expect(result.text).toContain("after");
    expect(result.text).toContain("[REDACTED:");
    expect(result.redactions).toBeGreaterThanOrEqual(secrets.length + 4);
    // Still one JSON value a line.
    for (const out of result.text.split("\n").filter(Boolean)) expect(() => JSON.parse(out)).not.toThrow();
    expect(redactText("ordinary prose about tokens and passwords").redactions).toBe(0);
  });

  it("fails closed: a line that is not JSON, or a secret it cannot take out, refuses the session", () => {
    expect(redactJsonl(`${line({ a: 1 })}\n{"truncated":`)).toEqual({ ok: false, reason: "line 2 is not JSON" });
    // A private key's header without its footer: its body cannot be told apart, so nothing goes.
    const open = redactJsonl(line({ output: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn" }));
    expect(open.ok).toBe(false);
    if (!open.ok) expect(open.reason).not.toContain("b3Blbn");
  });
});
