/**
 * `npm run bench -- memory-search`: the agent's memory search on a large memory. Seeds 10,000
 * notes of 50–400 words, all under the root folder Memory (as `notes` seeds its workspace, in a
 * child process), adds the acceptance example `Memory/Self/USER.md`, and starts the real server
 * on SQLite. Then measures, one request at a time, `POST /os/memory/search` for natural-language
 * questions against trivial requests (the floor), and in-process the ranked search against the
 * AND-only search Tandem had before, and a select by id, on the same database in the same run.
 */
import { searchMemory } from "../apps/server/src/workspace/memory/memory-service";
import { memoryFolderIds } from "../apps/server/src/workspace/memory/memory-tree";
import { andOnlySearch } from "./lib/and-search";
import { describeLoad, positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, sampleSequential } from "./lib/latency";
import { DEFAULT_SEED_OPTIONS } from "./lib/notes-seed";
import { describeMachine, formatTable } from "./lib/report";
import { startSeededTandem } from "./lib/seeded-tandem";

const TARGET_P50_MS = 30;

/** The profile the acceptance example asks about, among the seeded notes. */
const USER_MD = [
  "# USER",
  "## Name",
  "Ada Lovelace",
  "## Goals",
  "- Run a marathon in under four hours",
  "- Learn Rust well enough to ship a command-line tool",
  "## Preferences",
  "- Tea over coffee",
].join("\n\n");

/**
 * Questions as the agent asks them. "goal", "budget" and "review" are common words of the seeded
 * text (each in a large share of the notes), "quokka" is in 2% of them.
 */
const QUERIES = ["what are my goals", "what did we decide about the budget review", "notes on the quokka", "budget"];

interface MemoryAnswer {
  result: { results: { title: string; path: string; snippet: string; score: number }[] };
}

interface Row {
  readonly name: string;
  readonly detail: string;
  readonly stats: LatencyStats;
  readonly target?: number;
}

function table(rows: readonly Row[]): string {
  return formatTable(
    ["measured (sequential)", "answer", "p50", "p95", "p99", "mean", "target p50", "verdict"],
    rows.map(({ name, detail, stats, target }) => [
      name,
      detail,
      formatMs(stats.p50Ms),
      formatMs(stats.p95Ms),
      formatMs(stats.p99Ms),
      formatMs(stats.meanMs),
      target === undefined ? "-" : `≤ ${target} ms`,
      target === undefined ? "(baseline)" : stats.p50Ms <= target ? "PASS" : "BELOW",
    ]),
  );
}

export async function run(): Promise<void> {
  const notes = positiveIntFromEnv("BENCH_MEMORY_NOTES", 10_000);
  const warmup = positiveIntFromEnv("BENCH_MEMORY_WARMUP", 20);
  const count = positiveIntFromEnv("BENCH_MEMORY_REQUESTS", 200);
  process.stdout.write(`${describeMachine()}\n${describeLoad()}\n`);
  process.stdout.write(`seeding ${notes.toLocaleString("en-US")} notes under the root folder Memory (child process)…\n`);
  const tandem = await startSeededTandem({ ...DEFAULT_SEED_OPTIONS, notes, rootFolder: "Memory" });
  const client = new KeepAliveClient(tandem.server.url, tandem.authHeaders);
  try {
    const { db } = tandem.server.context;
    await client.expect(200, "POST", "/api/v1/accumulate", { files: [{ path: "Memory/Self/USER.md", content: USER_MD }] });
    const folderIds = await memoryFolderIds(db, tandem.userId);
    const inMemory = await db
      .selectFrom("notes")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("folder_id", "in", folderIds)
      .executeTakeFirstOrThrow();
    process.stdout.write(
      `seeded in ${(tandem.seedWallMs / 1000).toFixed(1)} s: ${Number(inMemory.n).toLocaleString("en-US")} notes in ${folderIds.length} folders under Memory ` +
        `(${tandem.seed.totalWords.toLocaleString("en-US")} words), USER.md among them\n`,
    );

    // What each query answers, so the timings are of real work; and the acceptance example's rank.
    const answers = new Map<string, MemoryAnswer["result"]["results"]>();
    for (const query of QUERIES) {
      const answer = JSON.parse((await client.expect(200, "POST", "/api/v1/os/memory/search", { query })).body) as MemoryAnswer;
      answers.set(query, answer.result.results);
    }
    const goals = answers.get("what are my goals") ?? [];
    const userRank = goals.findIndex((hit) => hit.path === "Memory/Self/USER.md");
    process.stdout.write(
      `"what are my goals": USER.md is result ${userRank >= 0 ? `#${userRank + 1}` : "NOT FOUND"} of ${goals.length}; ` +
        `its snippet: ${JSON.stringify(goals[userRank]?.snippet ?? "")}\n`,
    );
    if (userRank !== 0) process.exitCode = 1;

    const rows: Row[] = [];
    const step = (name: string) => process.stdout.write(`measuring ${name}…\n`);
    const settings = { warmup, count };

    step("floors over HTTP");
    rows.push({
      name: "GET /healthz (floor: no auth, no SQL)",
      detail: "",
      stats: await sampleSequential(async () => void (await client.expect(200, "GET", "/healthz")), settings),
    });
    rows.push({
      name: "GET /api/v1/identity (floor + auth, 1 row)",
      detail: "",
      stats: await sampleSequential(async () => void (await client.expect(200, "GET", "/api/v1/identity")), settings),
    });
    for (const query of QUERIES) {
      step(`POST /os/memory/search "${query}"`);
      const hits = answers.get(query) ?? [];
      rows.push({
        name: `POST /os/memory/search "${query}"`,
        detail: `${hits.length} results, best "${hits[0]?.title ?? ""}"`.slice(0, 60),
        stats: await sampleSequential(async () => void (await client.expect(200, "POST", "/api/v1/os/memory/search", { query })), settings),
        target: TARGET_P50_MS,
      });
    }

    // In-process, same database, no HTTP: ranked search against the AND-only search it replaced.
    const inProcess: Row[] = [];
    const someId = (await db.selectFrom("notes").select("id").where("folder_id", "in", folderIds).limit(1).executeTakeFirstOrThrow()).id;
    step("select by id (in process)");
    inProcess.push({
      name: "select one note by id (floor of a query)",
      detail: "1 row",
      stats: await sampleSequential(
        async () => void (await db.selectFrom("notes").selectAll().where("id", "=", someId).execute()),
        settings,
      ),
    });
    for (const query of QUERIES) {
      step(`in process "${query}"`);
      const before = await andOnlySearch(db, tandem.userId, await memoryFolderIds(db, tandem.userId), query, 10);
      inProcess.push({
        name: `before: AND of every word "${query}"`,
        detail: `${before.length} results`,
        stats: await sampleSequential(async () => {
          await andOnlySearch(db, tandem.userId, await memoryFolderIds(db, tandem.userId), query, 10);
        }, settings),
      });
      const now = await searchMemory(db, "sqlite", tandem.userId, query, 10);
      inProcess.push({
        name: `now: ranked OR of the terms "${query}"`,
        detail: `${now.length} results`,
        stats: await sampleSequential(async () => void (await searchMemory(db, "sqlite", tandem.userId, query, 10)), settings),
        target: TARGET_P50_MS,
      });
    }

    process.stdout.write(
      [
        "",
        `settings: ${warmup} warm-up + ${count} measured per row, one at a time; limit 10 (the route's default)`,
        "",
        table(rows),
        "client-measured over one keep-alive connection (request sent → whole body read), server in the same process",
        "",
        table(inProcess),
        "in process: both searches include finding the Memory folders (one query) and return the same fields; times in ms",
        "",
      ].join("\n"),
    );
  } finally {
    client.close();
    await tandem.close();
  }
}
