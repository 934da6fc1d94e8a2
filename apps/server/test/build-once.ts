import { ensureBuilt } from "../scripts/build.mjs";

/**
 * Vitest's global setup: builds dist/ once before any test file runs (only when a source changed
 * since the last build), so the tests that spawn `tandem-server` run the build of the code under
 * test, never a stale one, and none of them pays for a build itself.
 */
export default async function setup(): Promise<void> {
  await ensureBuilt();
}
