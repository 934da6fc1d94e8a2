import { describe, expect, it } from "vitest";
import { checkContext, checkTask, MAX_CONTEXT_BYTES } from "./context-safety";

const reasonOf = (context: unknown) => {
  const check = checkContext(context);
  return check.safe ? null : check.reason;
};

describe("checkContext", () => {
  it("accepts ordinary context, including harmless words near credential names", () => {
    expect(checkContext({})).toEqual({ safe: true });
    expect(
      checkContext({
        repo: "tandem",
        files: ["src/a.ts", "src/b.ts"],
        nested: { depth: [1, 2, { note: "ask before pushing" }] },
        tokenCount: 1200,
        maxTokens: "4096",
        password: "",
        apiKey: null,
        hint: "use sk-short",
        prose: "the bearer of this note is Bob. Bearer instructions follow.",
      }),
    ).toEqual({ safe: true });
  });

  it.each([
    [null, "not null"],
    [[1, 2], "not an array"],
    ["text", "not a string"],
    [42, "not a number"],
    [true, "not a boolean"],
  ])("refuses %j: %s", (context, expected) => {
    expect(reasonOf(context)).toBe(`context must be a JSON object, ${expected}`);
  });

  it("refuses a context over 16 KiB, counting UTF-8 bytes", () => {
    expect(checkContext({ text: "a".repeat(MAX_CONTEXT_BYTES - 20) })).toEqual({ safe: true });
    expect(reasonOf({ text: "a".repeat(MAX_CONTEXT_BYTES) })).toMatch(/limit is 16384 \(16 KiB\)/);
    // 6,000 three-byte characters: short in characters, 18,000 bytes.
    expect(reasonOf({ text: "€".repeat(6000) })).toMatch(/^context is \d+ bytes/);
  });

  it.each([
    ["password", { password: "hunter2" }, 'context.password holds a credential ("password")'],
    ["db_password", { db: { db_password: "x" } }, 'context.db.db_password holds a credential ("db_password")'],
    ["secret", { client_secret: "abc" }, "client_secret"],
    ["token", { githubToken: "abc" }, "githubToken"],
    ["api_key", { "X-Api-Key": "abc" }, "X-Api-Key"],
    ["authorization", { headers: { Authorization: "Basic abc" } }, 'context.headers.Authorization holds a credential ("Authorization")'],
    ["cookie", { "set-cookie": "sid=1" }, "set-cookie"],
    ["private_key", { private_key: "abc" }, "private_key"],
    ["credential", { list: [{ credentials: "abc" }] }, "context.list[0].credentials"],
    ["pwd", { db: { pwd: "abc" } }, 'context.db.pwd holds a credential ("pwd")'],
    ["ssh key", { ssh_key: "abc" }, "ssh_key"],
    ["id_ed25519", { id_ed25519: "abc" }, "id_ed25519"],
  ])("refuses a credential-named key holding a value (%s)", (_kind, context, expected) => {
    expect(reasonOf(context)).toContain(expected);
  });

  it.each([
    ["svc_sk_", `note: svc_sk_${"a".repeat(44)}`, "Tandem API key"],
    ["svc_dev_", `svc_dev_${"b".repeat(44)}`, "Tandem device token"],
    ["sk-", "key is sk-proj-abcdefghijklmnopqrstuvwx", "API secret key"],
    ["ghp_", `ghp_${"c".repeat(36)}`, "GitHub token"],
    ["github_pat_", `github_pat_${"d".repeat(40)}`, "GitHub token"],
    ["xox", "xoxb-123456789012-abcdefghij", "Slack token"],
    ["AKIA", "AKIAIOSFODNN7EXAMPLE", "AWS access key id"],
    ["private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE...", "private key block"],
    ["OpenSSH key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl", "private key block"],
    ["RFC 4716 key", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/5", "private key block"],
    ["PGP key", "-----BEGIN PGP PRIVATE KEY BLOCK-----", "private key block"],
    ["OpenSSH body", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "SSH private key"],
    ["PuTTY key", "PuTTY-User-Key-File-2: ssh-rsa", "SSH private key (PuTTY)"],
    ["password assignment", "then password=hunter22 works", "credential assignment"],
    ["Bearer", "curl -H 'Authorization: Bearer abcdef123456'", "Bearer credential"],
  ])("refuses a value that looks like a secret (%s) at any depth, without echoing it", (_kind, secret, expected) => {
    const reason = reasonOf({ deep: { list: ["fine", { value: secret }] } });
    expect(reason).toContain("context.deep.list[1].value");
    expect(reason).toContain(expected);
    expect(reason).not.toContain(secret);
  });

  it("checks a task as text: secrets are refused, prose about credentials passes", () => {
    expect(checkTask("Rotate the API token handling: password: field must be masked")).toEqual({ safe: true });
    const check = checkTask(`Use ghp_${"f".repeat(36)} to push`);
    expect(check).toEqual({ safe: false, reason: "task looks like it contains a GitHub token; never pass credentials in a delegation" });
  });

  it("refuses a secret used as a key", () => {
    expect(reasonOf({ [`ghp_${"e".repeat(36)}`]: true })).toMatch(/a key in context looks like a GitHub token/);
  });

  it("walks deeply nested documents without overflowing", () => {
    let deep: unknown = { leaf: "AKIAIOSFODNN7EXAMPLE" };
    for (let i = 0; i < 2000; i++) deep = { d: deep };
    expect(reasonOf(deep)).toContain("AWS access key id");
  });
});
