import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// One run covers every workspace; each keeps its own settings in its own vitest.config.ts.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "apps/*/vitest.config.ts"],
    // A test file spends most of its time waiting (on its servers, sockets, PostgreSQL, Chromium, timers),
    // not computing. Vitest's default (one worker fewer than the cores) ran the files one at a time on a
    // 2-core machine; two workers per core keep both cores busy. The projects also set `isolate: false`:
    // a worker keeps the modules it loaded for the next file instead of importing the server again
    // (that import was most of a small file's time). Files stay apart through what they start: their own
    // servers, data directories, PostgreSQL schemas, ports and Redis prefixes.
    maxWorkers: Math.min(8, 2 * availableParallelism()),
  },
});
