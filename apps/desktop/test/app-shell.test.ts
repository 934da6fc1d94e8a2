import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Host, startHost } from "../src/host/host";
import { FileSecretStore } from "../src/host/session/file-secret-store";
import { readDesktopVersion } from "../src/web/package-version";
import { type RunningWebServer, startWebServer } from "../src/web/web-server";

const CHROMIUM_PATH = "/usr/bin/chromium";
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
const SCREENSHOT_PATH = fileURLToPath(new URL("../../../docs/screenshots/app-shell.png", import.meta.url));

const chromiumMissing = !existsSync(CHROMIUM_PATH);
if (chromiumMissing) {
  console.warn(`Skipping the app shell browser tests: ${CHROMIUM_PATH} is absent (install Debian's chromium package).`);
}

/** The real production build, written to a temporary directory so it never races a developer's `out/`. */
async function buildApp(outDir: string): Promise<void> {
  const electronVite = path.join(
    path.dirname(createRequire(import.meta.url).resolve("electron-vite/package.json")),
    "bin/electron-vite.js",
  );
  await promisify(execFile)(process.execPath, [electronVite, "build", "--outDir", outDir, "--logLevel", "warn"], { cwd: DESKTOP_DIR });
}

describe.skipIf(chromiumMissing)("app shell in web mode", () => {
  let outDir: string;
  let server: RunningWebServer;
  let host: Host;
  let browser: Browser;
  let page: Page;
  let version: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    outDir = await mkdtemp(path.join(tmpdir(), "tandem-desktop-build-"));
    [browser] = await Promise.all([chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS }), buildApp(outDir)]);
    // The renderer has no other source for the version or the mode: showing them proves the typed API works.
    version = await readDesktopVersion();
    const dataDir = path.join(outDir, "data");
    host = await startHost({ mode: "web", version, dataDir, secrets: new FileSecretStore(dataDir) });
    server = await startWebServer(host.api, { rendererDir: path.join(outDir, "renderer") });
    page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    await page.goto(server.url);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await host?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it("shows the header, the sections and the app info the host reports", async () => {
    await page.getByRole("banner").getByRole("heading", { name: "Tandem" }).waitFor();
    const sections = page.getByRole("navigation", { name: "Sections" }).getByRole("button");
    expect(await sections.allTextContents()).toEqual(["Notes", "Todos", "Approvals"]);
    expect(await page.getByRole("main").getByRole("heading").textContent()).toBe("Notes");
    expect(await page.getByRole("main").textContent()).toContain("No notes yet.");

    const appInfo = page.getByTestId("app-info");
    await appInfo.waitFor();
    expect(await appInfo.textContent()).toBe(`v${version} · web`);

    await mkdir(path.dirname(SCREENSHOT_PATH), { recursive: true });
    await page.screenshot({ path: SCREENSHOT_PATH });
    expect(pageErrors).toEqual([]);
  });

  it("shows the selected section's empty state", async () => {
    await page.getByRole("button", { name: "Approvals" }).click();
    expect(await page.getByRole("button", { name: "Approvals" }).getAttribute("aria-current")).toBe("page");
    expect(await page.getByRole("main").getByRole("heading").textContent()).toBe("Approvals");
    expect(await page.getByRole("main").textContent()).toContain("No tool calls are waiting for your decision.");
    expect(pageErrors).toEqual([]);
  });
});
