import { defineConfig } from "vitest/config";

// One run covers every workspace; each keeps its own settings in its own vitest.config.ts.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "apps/*/vitest.config.ts"],
  },
});
