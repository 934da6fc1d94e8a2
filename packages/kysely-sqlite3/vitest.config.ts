import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { name: "kysely-sqlite3", include: ["src/**/*.test.ts"] },
});
