import react from "@vitejs/plugin-react";
import { defineConfig } from "electron-vite";
import type { Rollup } from "vite";

/**
 * Rollup's notices about dependencies' own code (a `@__PURE__` comment it cannot place, in zod) say
 * nothing we could act on; every other warning, and every one about our code, still shows.
 */
function onwarn(warning: Rollup.RollupLog, warn: (warning: Rollup.RollupLog) => void): void {
  if (warning.code === "INVALID_ANNOTATION" && warning.id?.includes("/node_modules/")) return;
  warn(warning);
}

// `electron-vite build` writes out/main, out/preload and out/renderer; package.json's `main` points into out/main.
export default defineConfig({
  main: {
    build: {
      // Workspace packages export TypeScript sources, which Electron cannot load: bundle them.
      externalizeDeps: { exclude: ["@tandem/core", "@tandem/kysely-sqlite3", "@tandem/unload-safe-hocuspocus"] },
      rollupOptions: { onwarn },
    },
  },
  preload: {
    build: {
      // A sandboxed preload can require nothing but electron, so every dependency is bundled into it.
      externalizeDeps: false,
      // Sandboxed preloads must be CommonJS; this package is "type": "module", so the file is named .cjs.
      rollupOptions: { onwarn, output: { format: "cjs", entryFileNames: "[name].cjs" } },
    },
  },
  // The renderer's root is src/renderer (electron-vite's default), where index.html lives.
  renderer: {
    plugins: [react()],
    // Minified: the page is parsed at every start, and a third the size parses and arrives sooner (electron-vite leaves it unminified).
    build: { minify: true, rollupOptions: { onwarn } },
  },
});
