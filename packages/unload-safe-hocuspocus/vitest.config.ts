import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { name: "unload-safe-hocuspocus", include: ["src/**/*.test.ts"] },
});
