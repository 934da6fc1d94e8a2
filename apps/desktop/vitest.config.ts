import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "desktop",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Files share a worker's loaded modules (see the root vitest.config.ts); each still starts its own servers.
    isolate: false,
    // The browser tests share one production build of the app per run (see test/global-setup.ts).
    globalSetup: ["test/global-setup.ts"],
    // Browser tests build the app and drive a real Chromium; give slow machines room.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
