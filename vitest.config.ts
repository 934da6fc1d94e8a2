import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// One run covers every workspace; each keeps its own settings in its own vitest.config.ts.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "apps/*/vitest.config.ts"],
    // Vitest's default (one worker fewer than the cores) ran the files one at a time on a 2-core machine,
    // leaving a core idle while a file waited on its servers, sockets, PostgreSQL, Chromium and timers (the
    // whole suite needs about 13 minutes of CPU; its files took 16 minutes one after another). One worker
    // more than the cores keeps both busy; two per core measured no faster on a loaded 2-core machine and
    // ran more tests into their time limits. The projects also set
    // `isolate: false`: a worker keeps the modules it loaded for its next file instead of importing the
    // server again (that import was most of a small file's time). Files stay apart through what they start:
    // their own servers, data directories, PostgreSQL schemas, ports and Redis prefixes.
    maxWorkers: Math.min(8, availableParallelism() + 1),
  },
});
