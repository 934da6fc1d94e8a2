/**
 * What looks like a secret: the server refuses delegations carrying one
 * (`delegation/delegations/context-safety.ts`), and the desktop's raw memory collector redacts
 * them from a session before it is encrypted, failing closed (`redactJsonl`).
 */

/**
 * Key names that hold credentials, compared without case, `_`, `-`, `.` or spaces, as a suffix:
 * `password`, `db_password`, `pwd`, `apiKey`, `X-Api-Key`, `githubToken`, `client_secret`,
 * `Set-Cookie`, `ssh_key`, `id_rsa`… A suffix rather than a substring keeps `tokenCount` or
 * `maxTokens` usable.
 */
export const CREDENTIAL_KEY =
  /(password|passwd|pwd|passphrase|secret|secrets|token|apikey|authorization|cookie|cookies|privatekey|privkey|sshkey|idrsa|iddsa|idecdsa|ided25519|credential|credentials)$/;

export const normalizeCredentialKey = (key: string) => key.toLowerCase().replace(/[\s_.-]/g, "");

/** Values that look like secrets wherever they appear, named for the reason (never echoed). */
export const SECRET_PATTERNS: readonly [RegExp, string][] = [
  [/svc_sk_[A-Za-z0-9]/, "a Tandem API key (svc_sk_…)"],
  [/svc_dev_[A-Za-z0-9]/, "a Tandem device token (svc_dev_…)"],
  // PEM and OpenSSH (`-----BEGIN OPENSSH PRIVATE KEY-----`), RFC 4716 (`---- BEGIN SSH2 …
  // PRIVATE KEY ----`) and PGP (`… PRIVATE KEY BLOCK-----`) headers, in any case.
  [/-{4,}\s*BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s*-{4,}/i, "a private key block"],
  // An OpenSSH private key's body even without its header: base64 of "openssh-key-v1\0".
  [/b3BlbnNzaC1rZXktdjE/, "an SSH private key"],
  [/PuTTY-User-Key-File-\d/, "an SSH private key (PuTTY)"],
  [/\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{16,}/, "an API secret key (sk-…)"],
  [/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/, "a GitHub token"],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/, "a Slack token (xox…)"],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, "an AWS access key id"],
  // Case-sensitive and with a digit in the token, so prose such as "Bearer instructions" passes.
  [/\bBearer\s+(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{8,}=*/, "a Bearer credential"],
  // `password=hunter22`, `pwd: s3cret!` in prose: a credential word assigned a value of six or more
  // characters with a digit or symbol, so "password: field" or "token: parser" still pass.
  [
    /\b(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\s*[:=]\s*["']?(?=[^\s"']*[0-9!@#$%^&*+=?~])[^\s"']{6,}/i,
    "a credential assignment",
  ],
];

/**
 * More token formats, which the collector redacts besides {@link SECRET_PATTERNS}: what a coding
 * agent's session most often shows (environment files, configuration, command output).
 */
export const TOKEN_PATTERNS: readonly [RegExp, string][] = [
  [/\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/, "a Stripe key"],
  [/\bAIza[0-9A-Za-z_-]{35}/, "a Google API key"],
  [/\bya29\.[0-9A-Za-z_-]{20,}/, "a Google OAuth token"],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, "a JSON Web Token"],
  [/\bnpm_[A-Za-z0-9]{36}\b/, "an npm token"],
  [/\bglpat-[A-Za-z0-9_-]{20,}/, "a GitLab token"],
  [/\bhf_[A-Za-z0-9]{30,}/, "a Hugging Face token"],
  [/\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/, "a SendGrid key"],
  [/https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/]+/, "a Slack webhook"],
  [/\bAccountKey=[A-Za-z0-9+/=]{40,}/, "an Azure storage key"],
  // The user and password of `scheme://user:password@host` (matched from the `://`, which is fast to find).
  [/:\/\/[^\s/:@"']+:[^\s/@"']+@/, "a password in a URL"],
  // `OPENAI_API_KEY=…`, `export GITHUB_TOKEN="…"`, `aws_secret_access_key = …` in .env files and shells.
  [
    /(?:API_KEY|TOKEN|SECRET|PASSWORD|SECRET_ACCESS_KEY|api_key|token|secret|password|secret_access_key)\s*=\s*["']?[^\s"']{8,}/,
    "a secret in an environment variable",
  ],
];

/** The whole of a private key block, header to footer, so its body goes with its header. */
const PRIVATE_KEY_BLOCK =
  /-{4,}\s*BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s*-{4,}[\s\S]*?-{4,}\s*END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s*-{4,}/gi;

/**
 * Found but never cut out alone: a private key's header without its footer, or its body without a
 * header, would leave the key's bytes behind. Only the whole block is redacted; what is left of one
 * is found again after redaction, and the session is refused.
 */
const WHOLE_ONLY = new Set(["a private key block", "an SSH private key", "an SSH private key (PuTTY)"]);

const ALL_PATTERNS = [...SECRET_PATTERNS, ...TOKEN_PATTERNS];
/**
 * Every pattern at once, case-insensitively (a superset of what they match one by one): most strings
 * of a session hold no secret, and one pass tells so, instead of one pass per pattern.
 */
const ANY_PATTERN = new RegExp(ALL_PATTERNS.map(([pattern]) => `(?:${pattern.source})`).join("|"), "i");
const GLOBAL_PATTERNS: readonly [RegExp, string][] = [
  [PRIVATE_KEY_BLOCK, "private-key"],
  ...ALL_PATTERNS.filter(([, kind]) => !WHOLE_ONLY.has(kind)).map(([pattern, kind]): [RegExp, string] => [
    new RegExp(pattern.source, `${pattern.flags}g`),
    slug(kind),
  ]),
];

function slug(kind: string): string {
  return kind
    .replace(/\(.*?\)/g, "")
    .replace(/^(?:an?|the) /, "")
    .trim()
    .replace(/[^A-Za-z0-9]+/g, "-")
    .toLowerCase();
}

/** The first kind of secret `text` seems to hold, or null. */
export function secretKind(text: string, patterns: readonly [RegExp, string][] = SECRET_PATTERNS): string | null {
  for (const [pattern, kind] of patterns) if (pattern.test(text)) return kind;
  return null;
}

/** `text` with everything that looks like a secret replaced by `[REDACTED:<kind>]`, and how many. */
export function redactText(text: string): { text: string; redactions: number } {
  if (!ANY_PATTERN.test(text)) return { text, redactions: 0 };
  let redactions = 0;
  let out = text;
  for (const [pattern, kind] of GLOBAL_PATTERNS) {
    out = out.replace(pattern, () => {
      redactions++;
      return `[REDACTED:${kind}]`;
    });
  }
  return { text: out, redactions };
}

export type Redaction = { ok: true; text: string; redactions: number } | { ok: false; reason: string };

/**
 * Redacts a JSONL session (Claude Code's and Codex's transcripts): every line is parsed, every
 * string (keys too) redacted, and the value of every credential-named key replaced. It fails
 * closed: a line that is not JSON, or a secret still found after redaction, refuses the whole
 * session (the reason never echoes a secret).
 */
export function redactJsonl(text: string): Redaction {
  let redactions = 0;
  const lines = text.split("\n");
  const out: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") {
      out.push(line);
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { ok: false, reason: `line ${index + 1} is not JSON` };
    }
    let redacted: unknown;
    try {
      redacted = redactValue(value, (count) => {
        redactions += count;
      });
    } catch {
      return { ok: false, reason: `line ${index + 1} nests too deeply` };
    }
    const leftover = findSecret(redacted);
    if (leftover) return { ok: false, reason: `line ${index + 1} still looks like it holds ${leftover} after redaction` };
    out.push(JSON.stringify(redacted));
  }
  return { ok: true, text: out.join("\n"), redactions };
}

function redactValue(root: unknown, counted: (count: number) => void): unknown {
  const redactString = (text: string) => {
    const result = redactText(text);
    if (result.redactions) counted(result.redactions);
    return result.text;
  };
  // A line nested deeper than any transcript is refused (the caller fails closed).
  const walk = (value: unknown, depth: number): unknown => {
    if (depth > 200) throw new Error("too deep");
    if (typeof value === "string") return redactString(value);
    if (Array.isArray(value)) return value.map((entry) => walk(entry, depth + 1));
    if (typeof value === "object" && value !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(value)) {
        const safeKey = redactString(key);
        if (typeof entry === "string" && entry.trim() !== "" && CREDENTIAL_KEY.test(normalizeCredentialKey(key))) {
          counted(1);
          out[safeKey] = "[REDACTED:credential]";
        } else {
          out[safeKey] = walk(entry, depth + 1);
        }
      }
      return out;
    }
    return value;
  };
  return walk(root, 0);
}

function findSecret(root: unknown): string | null {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === "string") {
      const kind = ANY_PATTERN.test(value) ? secretKind(value, ALL_PATTERNS) : null;
      if (kind) return kind;
    } else if (Array.isArray(value)) {
      for (const entry of value) pending.push(entry);
    } else if (typeof value === "object" && value !== null) {
      for (const [key, entry] of Object.entries(value)) pending.push(key, entry);
    }
  }
  return null;
}
