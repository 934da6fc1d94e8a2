/**
 * `npm run bench -- raw-memory`: what the collector costs for one 5 MB session. Each round takes a
 * JSONL session of 5 MB through redaction, encryption (XChaCha20-Poly1305 under the account key) and
 * `POST /api/v1/raw-memory/records`, beside the baseline of the same run: the same number of bytes
 * posted to the same route with no redaction and no encryption. Rounds alternate. Target: the
 * collector's path ≤ 1 s at p50.
 */
import { randomUUID } from "node:crypto";
import { redactJsonl, TandemClient } from "@tandem/core";
import { RawMemoryDeviceClient } from "@tandem/core/raw-memory-client";
import { newKeyPair, sessionIdHash, toBase64 } from "@tandem/core/raw-memory-crypto";
import { positiveIntFromEnv } from "./lib/env";
import { describeMachine, formatTable } from "./lib/report";
import { startBenchTandem } from "./lib/tandem";

const SESSION_BYTES = 5 * 1024 * 1024;
const TARGET_MS = 1000;

/** A coding-agent session of about `bytes`: prompts, answers, tool output, a token here and there. */
function session(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let turn = 0; size < bytes; turn++) {
    const line = JSON.stringify({
      type: turn % 3 === 0 ? "user" : "assistant",
      uuid: randomUUID(),
      timestamp: new Date(Date.UTC(2026, 11, 8, 10, 0, turn)).toISOString(),
      message: {
        role: turn % 3 === 0 ? "user" : "assistant",
        content: `Turn ${turn}: ran \`npm test\` in apps/server; ${"the garden planner's tests pass and the build is green. ".repeat(20)}${
          turn % 50 === 0 ? " export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789" : ""
        }`,
      },
    });
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p90: at(0.9), max: sorted.at(-1) ?? 0 };
};

export async function run(): Promise<void> {
  const rounds = positiveIntFromEnv("BENCH_RAW_MEMORY_ROUNDS", 10);
  process.stdout.write(`${describeMachine()}\n`);
  const tandem = await startBenchTandem("bench");
  try {
    const api = new TandemClient({
      baseUrl: `${tandem.server.url}/api/v1`,
      token: (tandem.authHeaders.authorization ?? "").slice("Bearer ".length),
    });
    const device = new RawMemoryDeviceClient(api, { deviceId: randomUUID(), name: "bench", ...newKeyPair() });
    await device.enrol();
    await device.setUp();
    const text = session(SESSION_BYTES);
    process.stdout.write(`session: ${(text.length / 1024 / 1024).toFixed(2)} MB of JSONL; ${rounds} rounds, alternating\n`);
    const collector: number[] = [];
    const redaction: number[] = [];
    const baseline: number[] = [];
    for (let round = 0; round < rounds + 1; round++) {
      // Redact, encrypt, upload: what the collector does once a session has finished.
      const collectorStart = performance.now();
      const redacted = redactJsonl(text);
      if (!redacted.ok) throw new Error(redacted.reason);
      const redactedAt = performance.now();
      const plaintext = new TextEncoder().encode(redacted.text);
      const record = device.seal({
        recordId: randomUUID(),
        runtime: "claude-code",
        sessionIdHash: sessionIdHash("claude-code", randomUUID()),
        createdAt: new Date().toISOString(),
        plaintext,
      });
      await device.upload(record);
      const collectorMs = performance.now() - collectorStart;
      // The baseline: the same bytes posted as they are (with room for the tag the route expects).
      const baselineStart = performance.now();
      const plain = Buffer.concat([Buffer.from(text), Buffer.alloc(16)]);
      await api.call("postRawMemoryRecord", {
        body: { ...record, recordId: randomUUID(), ciphertext: toBase64(plain), plaintextBytes: plain.length - 16 },
      });
      const baselineMs = performance.now() - baselineStart;
      if (round === 0) continue; // warm-up
      collector.push(collectorMs);
      redaction.push(redactedAt - collectorStart);
      baseline.push(baselineMs);
    }
    const c = stats(collector);
    const b = stats(baseline);
    const r = stats(redaction);
    process.stdout.write(
      `\n${formatTable(
        ["path (5 MB session)", "p50 ms", "p90 ms", "max ms"],
        [
          ["redact + encrypt + POST /raw-memory/records", c.p50.toFixed(0), c.p90.toFixed(0), c.max.toFixed(0)],
          ["  of which redaction", r.p50.toFixed(0), r.p90.toFixed(0), r.max.toFixed(0)],
          ["plain POST of the same bytes (baseline)", b.p50.toFixed(0), b.p90.toFixed(0), b.max.toFixed(0)],
        ],
      )}\n`,
    );
    process.stdout.write(
      `\n${c.p50 <= TARGET_MS ? "PASS" : "BELOW"}: collector p50 ${c.p50.toFixed(0)} ms (target ≤ ${TARGET_MS} ms); ${(c.p50 - b.p50).toFixed(0)} ms over the plain upload\n`,
    );
  } finally {
    await tandem.close();
  }
}
