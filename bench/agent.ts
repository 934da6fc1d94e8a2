/**
 * `npm run bench -- agent`: the personal agent's chat.
 * 1. The `local` provider over a seeded 10,000-note workspace: time to the first byte of the
 *    stream and to its end (targets: p50 ≤ 150 ms and ≤ 500 ms), beside the same question's
 *    search alone (`POST /os/notes/search`) and `/healthz`, measured the same way in the same run.
 * 2. A fake OpenAI-compatible server that streams a fixed answer at once: the time to the first
 *    `text-delta` line of `/chat`, minus the time to the first content chunk asking the fake
 *    directly: our added latency (target: p50 ≤ 20 ms).
 */
import http from "node:http";
import { startFakeOpenAI } from "../apps/server/test/fakes/fake-openai";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, summarize } from "./lib/latency";
import { DEFAULT_SEED_OPTIONS } from "./lib/notes-seed";
import { describeMachine, formatTable } from "./lib/report";
import { startSeededTandem } from "./lib/seeded-tandem";
import { startBenchTandem } from "./lib/tandem";

const QUESTION = "What do my notes say about the budget review?";
const FIXED_ANSWER = "The budget review is on Thursday; the numbers are in the Q3 sheet.";

interface StreamTiming {
  /** Request sent → first byte of the body. */
  readonly firstByteMs: number;
  /** Request sent → first chunk the marker accepts. */
  readonly firstMarkMs: number;
  /** Request sent → end of the body. */
  readonly totalMs: number;
  readonly body: string;
}

/** One streamed POST over a keep-alive agent, timing its first byte, first marked chunk and end. */
function timedStream(agent: http.Agent, url: string, headers: Record<string, string>, body: unknown, mark: (text: string) => boolean) {
  const payload = JSON.stringify(body);
  return new Promise<StreamTiming>((resolve, reject) => {
    const started = performance.now();
    let firstByteMs = Number.NaN;
    let firstMarkMs = Number.NaN;
    let text = "";
    const request = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) },
      },
      (response) => {
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          const now = performance.now() - started;
          if (Number.isNaN(firstByteMs)) firstByteMs = now;
          text += chunk;
          if (Number.isNaN(firstMarkMs) && mark(text)) firstMarkMs = now;
        });
        response.on("end", () => {
          if (response.statusCode !== 200) reject(new Error(`${url} answered ${response.statusCode}: ${text.slice(0, 300)}`));
          else resolve({ firstByteMs, firstMarkMs, totalMs: performance.now() - started, body: text });
        });
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
}

async function sample(count: number, warmup: number, once: () => Promise<StreamTiming>) {
  for (let i = 0; i < warmup; i++) await once();
  const timings: StreamTiming[] = [];
  for (let i = 0; i < count; i++) timings.push(await once());
  return {
    firstByte: summarize(timings.map((t) => t.firstByteMs)),
    firstMark: summarize(timings.map((t) => t.firstMarkMs)),
    total: summarize(timings.map((t) => t.totalMs)),
    last: timings.at(-1),
  };
}

function row(name: string, stats: LatencyStats, target?: number): string[] {
  return [
    name,
    String(stats.count),
    formatMs(stats.p50Ms),
    formatMs(stats.p90Ms),
    formatMs(stats.p99Ms),
    formatMs(stats.meanMs),
    target === undefined ? "(baseline)" : `≤ ${target} ms`,
    target === undefined ? "" : stats.p50Ms <= target ? "PASS" : "BELOW",
  ];
}

const HEADER = ["measurement (sequential, one keep-alive connection)", "n", "p50", "p90", "p99", "mean", "target p50", "verdict"];

async function localOverSeededWorkspace(count: number, warmup: number): Promise<string> {
  process.stdout.write(`seeding ${DEFAULT_SEED_OPTIONS.notes} notes…\n`);
  const tandem = await startSeededTandem(DEFAULT_SEED_OPTIONS);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const client = new KeepAliveClient(tandem.server.url, tandem.authHeaders);
  try {
    const chatUrl = `${tandem.server.apiUrl}/chat`;
    const once = () => timedStream(agent, chatUrl, tandem.authHeaders, { message: QUESTION }, (text) => text.includes("text-delta"));
    const check = await once();
    if (!check.body.includes("Sources:")) throw new Error(`the local agent did not answer from the notes: ${check.body.slice(0, 400)}`);
    process.stdout.write("measuring /healthz and the search alone…\n");
    const floor: number[] = [];
    const search: number[] = [];
    for (let i = 0; i < warmup + count; i++) {
      let started = performance.now();
      await client.expect(200, "GET", "/healthz");
      if (i >= warmup) floor.push(performance.now() - started);
      started = performance.now();
      await client.expect(200, "POST", "/api/v1/os/notes/search", { query: "budget review" });
      if (i >= warmup) search.push(performance.now() - started);
    }
    process.stdout.write("measuring POST /chat (local)…\n");
    const chat = await sample(count, warmup, once);
    return formatTable(HEADER, [
      row("GET /healthz (floor)", summarize(floor)),
      row('POST /os/notes/search "budget review" (the search alone)', summarize(search)),
      row("POST /chat local: first byte", chat.firstByte, 150),
      row("POST /chat local: first text-delta", chat.firstMark),
      row("POST /chat local: complete answer", chat.total, 500),
    ]);
  } finally {
    agent.destroy();
    client.close();
    await tandem.close();
  }
}

async function addedLatencyOverFakeProvider(count: number, warmup: number): Promise<string> {
  const fake = await startFakeOpenAI({ fixed: { text: FIXED_ANSWER } });
  const tandem = await startBenchTandem("bench", { modelProvider: "openai-compatible", modelBaseUrl: fake.baseUrl, model: "bench-model" });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const direct = () =>
      timedStream(
        agent,
        `${fake.baseUrl}/chat/completions`,
        {},
        { model: "bench-model", stream: true, messages: [{ role: "user", content: "hello" }] },
        (text) => text.includes('"content"'),
      );
    const viaChat = () =>
      timedStream(agent, `${tandem.server.apiUrl}/chat`, { ...tandem.authHeaders }, { message: "hello" }, (text) =>
        text.includes("text-delta"),
      );
    process.stdout.write("measuring the fake provider directly, then through POST /chat…\n");
    const fakeAlone = await sample(count, warmup, direct);
    const chat = await sample(count, warmup, viaChat);
    const added = chat.firstMark.p50Ms - fakeAlone.firstMark.p50Ms;
    const table = formatTable(HEADER, [
      row("fake provider directly: first content chunk", fakeAlone.firstMark),
      row("POST /chat via the fake: first text-delta", chat.firstMark),
      row("POST /chat via the fake: complete answer", chat.total),
    ]);
    return `${table}\nadded latency to the first text-delta (p50 difference): ${formatMs(added)} ms (target ≤ 20 ms): ${added <= 20 ? "PASS" : "BELOW"}`;
  } finally {
    agent.destroy();
    await tandem.close();
    await fake.close();
  }
}

export async function run(): Promise<void> {
  const count = positiveIntFromEnv("BENCH_AGENT_REQUESTS", 100);
  const warmup = positiveIntFromEnv("BENCH_AGENT_WARMUP", 10);
  process.stdout.write(`${describeMachine()}\n`);
  const local = await localOverSeededWorkspace(count, warmup);
  const remote = await addedLatencyOverFakeProvider(count, warmup);
  process.stdout.write(`\n1. local provider, ${DEFAULT_SEED_OPTIONS.notes} notes, "${QUESTION}"\n${local}\n`);
  process.stdout.write(
    `\n2. OpenAI-compatible fake streaming a fixed answer at once\n${remote}\nall times in ms, client-measured; same process as the server\n`,
  );
}
