/**
 * `npm run bench -- metering`:
 * 1. The budget check's cost on `POST /chat` (local provider, `stream: false`): a user with
 *    budgets on every scope a chat touches (account and API key) against one with none, requests
 *    interleaved one at a time in the same run (target: p50 overhead ≤ 1 ms); and `startRun` (the
 *    check and the run's count) in process, with and without budgets.
 * 2. `GET /metering/usage` for a month of 1,000,000 meter events (model calls seeded with SQL, then
 *    folded into the counters as recording would have grown them) (target: p50 ≤ 50 ms), beside
 *    `GET /agent/usage` over the same month, which groups the raw rows.
 */
import { ALL_SCOPES } from "@tandem/core";
import { sql } from "kysely";
import { foldModelUsage, monthOf, startRun } from "../apps/server/src/agent/usage/meters";
import { createApiKey } from "../apps/server/src/auth/api-keys";
import { createUser } from "../apps/server/src/people/users/users-service";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, sampleSequential, summarize } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { startBenchTandem } from "./lib/tandem";

const row = (label: string, stats: LatencyStats, target = "-", verdict = "(baseline)") => [
  label,
  formatMs(stats.p50Ms),
  formatMs(stats.p90Ms),
  formatMs(stats.p99Ms),
  formatMs(stats.meanMs),
  target,
  verdict,
];

export async function run(): Promise<void> {
  const chats = positiveIntFromEnv("BENCH_METERING_CHATS", 300);
  const events = positiveIntFromEnv("BENCH_METERING_EVENTS", 1_000_000);
  const tandem = await startBenchTandem("bench", { maxRunsPerDay: 10_000_000 });
  const { context } = tandem.server;
  const { db } = context;
  try {
    console.log(describeMachine());
    // The second user, with a budget on every scope a chat is checked against.
    const budgeted = await createUser(db, { username: "budgeted" });
    const key = await createApiKey(db, { userId: budgeted.id, scopes: ALL_SCOPES, label: "benchmark" });
    const plain = new KeepAliveClient(tandem.server.url, tandem.authHeaders);
    const limited = new KeepAliveClient(tandem.server.url, { authorization: `Bearer ${key.apiKey}` });
    await limited.expect(200, "PUT", "/api/v1/metering/budgets", {
      budgets: [
        { scope: "account", tokensPerMonth: 900_000_000_000, runsPerDay: 9_000_000, activeDevices: 100 },
        { scope: "apiKey", scopeId: key.keyId, tokensPerMonth: 900_000_000_000, runsPerDay: 9_000_000 },
      ],
    });
    const body = { message: "what is due today?", stream: false };
    for (const client of [plain, limited]) await client.expect(200, "POST", "/api/v1/init");

    // Interleaved: each pair of samples meets the same load on the machine.
    const samples: [number[], number[]] = [[], []];
    for (let i = 0; i < chats + 20; i++) {
      const order = i % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
      for (const which of order) {
        const started = performance.now();
        await (which === 0 ? plain : limited).expect(200, "POST", "/api/v1/chat", body);
        if (i >= 20) samples[which].push(performance.now() - started);
      }
    }
    const none = summarize(samples[0]);
    const withBudgets = summarize(samples[1]);
    const overhead = withBudgets.p50Ms - none.p50Ms;

    // In process: the check and the run's count alone.
    const model = context.models.resolve();
    const kind = { source: "chat", model };
    const me = (await db.selectFrom("users").select("id").where("username", "=", "bench").executeTakeFirstOrThrow()).id;
    const meKey = (await db.selectFrom("api_keys").select("id").where("user_id", "=", me).executeTakeFirstOrThrow()).id;
    const startNone = await sampleSequential(
      async () => {
        await startRun(context, { userId: me, apiKeyId: meKey }, kind);
      },
      { warmup: 50, count: 2000 },
    );
    const startBudgets = await sampleSequential(
      async () => {
        await startRun(context, { userId: budgeted.id, apiKeyId: key.keyId }, kind);
      },
      { warmup: 50, count: 2000 },
    );

    console.log(`\n1. Budget check on POST /chat (local provider, stream false), ${chats} interleaved requests each\n`);
    console.log(
      formatTable(
        ["what", "p50", "p90", "p99", "mean", "target", "verdict"],
        [
          row("POST /chat, no budgets", none),
          row("POST /chat, account + API key budgets", withBudgets, "≤ +1 ms p50", overhead <= 1 ? "PASS" : "BELOW"),
          row("startRun in process, no budgets", startNone),
          row("startRun in process, budgets", startBudgets),
        ],
      ),
    );
    console.log(
      `p50 overhead of the budgets on POST /chat: ${formatMs(overhead)} ms (in process: ${formatMs(startBudgets.p50Ms - startNone.p50Ms)} ms)`,
    );

    // 2. A month of a million meter events.
    const month = monthOf(context.clock.iso());
    const started = performance.now();
    await sql`
      insert into model_usage (user_id, api_key_id, purpose, provider, model, prompt_tokens, completion_tokens, total_tokens, created_at)
      with recursive n(i) as (select 1 union all select i + 1 from n where i < ${events})
      select ${me}, ${meKey},
        case i % 5 when 0 then 'chat' when 1 then 'heartbeat' when 2 then 'agent_message' when 3 then 'guest' else 'briefing' end,
        'local', case i % 3 when 0 then 'local-small' when 1 then 'local-medium' else 'local-large' end,
        100 + i % 50, 20 + i % 7, 120 + i % 50 + i % 7,
        ${`${month}-01T00:00:00.000Z`}
      from n`.execute(db);
    await foldModelUsage(db, me, month);
    console.log(
      `\nseeded ${events.toLocaleString("en")} model calls and folded them into the counters in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const targets: [string, string, number | undefined, number][] = [
      ["GET /metering/usage", `/api/v1/metering/usage?month=${month}`, 50, 200],
      ["GET /metering/usage?groupBy=model", `/api/v1/metering/usage?month=${month}&groupBy=model`, 50, 200],
      ["GET /metering/usage?groupBy=source", `/api/v1/metering/usage?month=${month}&groupBy=source`, 50, 200],
      ["GET /metering/invoice", `/api/v1/metering/invoice?month=${month}`, 50, 200],
      ["GET /agent/usage (groups the raw rows)", `/api/v1/agent/usage?since=${month}-01`, undefined, 5],
    ];
    const results: string[][] = [];
    for (const [label, path, target, count] of targets) {
      const answer = JSON.parse((await plain.expect(200, "GET", path)).body) as {
        usage?: { total: { modelCalls?: number; calls?: number } };
      };
      const calls = answer.usage?.total.modelCalls ?? answer.usage?.total.calls;
      const stats = await sampleSequential(
        async () => {
          await plain.expect(200, "GET", path);
        },
        { warmup: Math.min(10, count), count },
      );
      results.push(
        row(
          `${label}${calls !== undefined ? ` (${calls.toLocaleString("en")} calls)` : ""}`,
          stats,
          target ? `≤ ${target} ms` : "-",
          target ? (stats.p50Ms <= target ? "PASS" : "BELOW") : "(baseline)",
        ),
      );
    }
    console.log(formatTable(["request", "p50", "p90", "p99", "mean", "target", "verdict"], results));
    console.log("all times in ms, client-measured (request sent → whole body read), one request at a time over one keep-alive connection");
    plain.close();
    limited.close();
  } finally {
    await tandem.close();
  }
}
