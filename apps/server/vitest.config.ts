import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "server",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Tests that spawn tandem-server (the CLI, several processes) run the build; in-process ones import the sources.
    globalSetup: ["test/build-once.ts"],
    // Files share a worker's loaded modules (see the root vitest.config.ts); each still starts its own servers.
    isolate: false,
    // Tests start real servers and real databases; give slow machines room.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
