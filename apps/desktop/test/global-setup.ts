import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

/**
 * One folder per test run for the app's production build: the first browser test file to need the
 * build makes it there, the others reuse it (an `electron-vite build` per file cost CI minutes).
 * Nothing is built here, so a run of unit tests alone pays nothing.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), "tandem-desktop-build-"));
  project.provide("desktopBuildDir", dir);
  return () => rm(dir, { recursive: true, force: true });
}
