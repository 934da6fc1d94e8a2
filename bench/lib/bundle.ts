/**
 * A benchmark child as the app ships its code: the desktop app runs its host from a bundle (electron-vite
 * builds the main process into one file), not through tsx compiling TypeScript at run time, whose loader
 * and retained source maps add tens of MB to a process's memory and a second to its start. The figures for
 * the host's memory and cold start are taken from such a bundle.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const CHECKOUT = fileURLToPath(new URL("../..", import.meta.url));
/** Inside node_modules, so the bundle's npm imports resolve from the checkout's node_modules (and git ignores it). */
const OUT_DIR = path.join(CHECKOUT, "node_modules", ".cache", "tandem-bench");

/** `lib0/encoding` → `lib0`, `@scope/name/x` → `@scope/name`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

/**
 * Tandem's own code (the workspace packages too) goes into the bundle; npm packages stay in node_modules,
 * as in the app, where the bundle finds them (the checkout's own; one a workspace keeps to itself is bundled).
 */
const npmPackagesExternal: Plugin = {
  name: "npm-packages-external",
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = packageName(args.path);
      if (name.startsWith("@tandem/") || name.startsWith("node:") || !existsSync(path.join(CHECKOUT, "node_modules", name)))
        return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** Bundles a TypeScript entry of this repository into one ES module; answers its URL (for `startChild` with `plainNode`). */
export async function bundleEntry(entry: URL): Promise<URL> {
  const outfile = path.join(OUT_DIR, `${path.basename(fileURLToPath(entry), ".ts")}.mjs`);
  await build({
    entryPoints: [fileURLToPath(entry)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    plugins: [npmPackagesExternal],
    logLevel: "warning",
  });
  return new URL(`file://${outfile}`);
}
