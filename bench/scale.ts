/**
 * `npm run bench -- scale`: several instances of one server on one PostgreSQL and one Redis, each
 * case beside its same-run single-instance baseline. Needs PostgreSQL and Redis: `BENCH_DATABASE_URL`
 * (default postgres://postgres@127.0.0.1:5432/test) and `BENCH_REDIS_URL` (default redis://127.0.0.1:6379).
 */
import { describeLoad } from "./lib/env";
import { describeMachine } from "./lib/report";
import { streamsAcrossInstances } from "./scale-streams";

export async function run(): Promise<void> {
  console.log(`scale: ${describeMachine()}; ${describeLoad()}`);
  await streamsAcrossInstances();
}
