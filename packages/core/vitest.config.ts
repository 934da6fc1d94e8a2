import { defineConfig } from "vitest/config";

export default defineConfig({
  // Files share a worker's loaded modules (see the root vitest.config.ts).
  test: { name: "core", include: ["src/**/*.test.ts"], isolate: false },
});
