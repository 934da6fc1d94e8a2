import react from "@vitejs/plugin-react";
import { defineConfig } from "electron-vite";

// `electron-vite build` writes out/main, out/preload and out/renderer; package.json's `main` points into out/main.
export default defineConfig({
  main: {
    build: {
      // Workspace packages export TypeScript sources, which Electron cannot load: bundle them.
      externalizeDeps: { exclude: ["@tandem/core", "@tandem/server"] },
    },
  },
  preload: {
    build: {
      // A sandboxed preload can require nothing but electron, so every dependency is bundled into it.
      externalizeDeps: false,
      // Sandboxed preloads must be CommonJS; this package is "type": "module", so the file is named .cjs.
      rollupOptions: { output: { format: "cjs", entryFileNames: "[name].cjs" } },
    },
  },
  // The renderer's root is src/renderer (electron-vite's default), where index.html lives.
  renderer: {
    plugins: [react()],
  },
});
