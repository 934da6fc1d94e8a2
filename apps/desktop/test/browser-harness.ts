/// <reference path="./provided-context.d.ts" />
import { execFile } from "node:child_process";
import { existsSync, watch } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { screenshotPath } from "@tandem/server/testing/screenshots";
import { type Browser, chromium, type Page } from "playwright-core";
import { inject } from "vitest";

/**
 * Helpers for the browser tests: the real renderer build, Debian's headless Chromium, screenshots,
 * steps on the page. The whole app for a test (server, host, build, browser) is in browser-app.ts;
 * this file imports no server or host code.
 */

export const CHROMIUM_PATH = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];
const DESKTOP_DIR = fileURLToPath(new URL("..", import.meta.url));

/** True (with a warning naming the suite) when Chromium is absent, for `describe.skipIf`. */
export function chromiumMissing(suite: string): boolean {
  if (existsSync(CHROMIUM_PATH)) return false;
  console.warn(`Skipping the ${suite} browser tests: ${CHROMIUM_PATH} is absent (install Debian's chromium package).`);
  return true;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/**
 * The real production build (`electron-vite build`), made once per test run in the folder the
 * global setup provides (never a developer's `out/`): the first file to ask builds it, holding a
 * lock folder; the others wait for its result file. Answers the renderer's directory for
 * `startWebServer`. Outside vitest (the benchmarks) the caller names an empty folder.
 */
export async function buildApp(dir: string = inject("desktopBuildDir")): Promise<string> {
  const outDir = path.join(dir, "out");
  const resultFile = path.join(dir, "result.json");
  try {
    await mkdir(path.join(dir, "lock"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    await whenExists(resultFile);
    const result = JSON.parse(await readFile(resultFile, "utf8")) as { error?: string };
    if (result.error !== undefined) throw new Error(`the app's build failed in another test file: ${result.error}`);
    return path.join(outDir, "renderer");
  }
  const electronVite = path.join(
    path.dirname(createRequire(import.meta.url).resolve("electron-vite/package.json")),
    "bin/electron-vite.js",
  );
  let failure: unknown;
  try {
    await promisify(execFile)(process.execPath, [electronVite, "build", "--outDir", outDir, "--logLevel", "warn"], { cwd: DESKTOP_DIR });
  } catch (error) {
    failure = error;
  }
  // Written whole, then renamed: a waiting file never reads half of it.
  await writeFile(`${resultFile}.tmp`, JSON.stringify(failure === undefined ? {} : { error: String(failure) }));
  await rename(`${resultFile}.tmp`, resultFile);
  if (failure !== undefined) throw failure;
  return path.join(outDir, "renderer");
}

/** Resolves once `file` exists, woken by the file system rather than by polling. */
function whenExists(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const watcher = watch(path.dirname(file), () => {
      if (existsSync(file)) done();
    });
    const done = () => {
      watcher.close();
      resolve();
    };
    watcher.on("error", reject);
    if (existsSync(file)) done(); // made before the watcher started
  });
}

/** Errors the page reports (uncaught exceptions and console errors); tests expect none. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  return errors;
}

/**
 * Saves a screenshot of the page as `<name>.png`: in a temporary folder, or in `docs/screenshots/`
 * under `npm run screenshots` (see `@tandem/server/testing/screenshots`).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: screenshotPath(name) });
}

/** A TCP port free right now on 127.0.0.1, for a server that must come back on the same address. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Signs in on the sign-in screen with an API key, filling in the server's address first when given. */
export async function signInOnPage(page: Page, apiKey: string, serverUrl?: string): Promise<void> {
  if (serverUrl !== undefined) await page.getByLabel("Server URL").fill(serverUrl);
  await page.getByLabel("API key", { exact: true }).fill(apiKey);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** Opens a section (Notes, Todos, Approvals, Bridge) from the signed-in app's navigation. */
export async function openSection(page: Page, name: string): Promise<void> {
  await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name }).click();
}
