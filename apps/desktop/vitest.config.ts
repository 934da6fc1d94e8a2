import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "desktop",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Browser tests build the app and drive a real Chromium; give slow machines room.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
