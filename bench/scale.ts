/**
 * `npm run bench -- scale`: several instances of one server on one PostgreSQL and one Redis, each
 * case beside its same-run single-instance baseline. Needs PostgreSQL and Redis: `BENCH_DATABASE_URL`
 * (default postgres://postgres@127.0.0.1:5432/test) and `BENCH_REDIS_URL` (default redis://127.0.0.1:6379).
 */
import { describeLoad, stringFromEnv } from "./lib/env";
import { describeMachine } from "./lib/report";
import { startScalePair } from "./lib/scale-pair";
import { openNotesMemory } from "./scale-memory";
import { streamsAcrossInstances } from "./scale-streams";
import { editsAcrossInstances } from "./scale-sync";

const CASES = ["memory", "edits", "streams"];

export async function run(): Promise<void> {
  const cases = new Set(stringFromEnv("BENCH_SCALE_CASES", "memory,edits,streams").split(","));
  for (const name of cases) if (!CASES.includes(name)) throw new Error(`BENCH_SCALE_CASES: unknown case "${name}" (${CASES.join(", ")})`);
  console.log(`scale: ${describeMachine()}; ${describeLoad()}`);
  const pair = await startScalePair(
    stringFromEnv("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"),
    stringFromEnv("BENCH_REDIS_URL", "redis://127.0.0.1:6379"),
  );
  try {
    // Memory first, before the latency runs have grown the heap.
    if (cases.has("memory")) await openNotesMemory(pair);
    if (cases.has("edits")) await editsAcrossInstances(pair);
    if (cases.has("streams")) await streamsAcrossInstances(pair);
  } finally {
    await pair.close();
  }
}
