import { rm } from "node:fs/promises";
import path from "node:path";
import { startTestServer, type TestServer } from "@tandem/server/testing";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import type { Host } from "../src/host/host";
import { type RunningWebServer, startWebServer } from "../src/web/web-server";
import { buildApp, collectPageErrors, launchChromium } from "./browser-harness";
import { startTestHost, tempDir } from "./host-harness";

export interface BrowserAppOptions {
  /** Names the temporary directory (`tandem-<name>-…`) that holds the host's data. */
  readonly name: string;
  /** For the test server (a fixed `port`, say). */
  readonly server?: Parameters<typeof startTestServer>[0];
  /** For the host (a fake `bridge`, say). */
  readonly host?: Parameters<typeof startTestHost>[1];
}

/** A page on the app, with the errors it reports (tests expect none). */
export interface AppPage {
  readonly page: Page;
  readonly pageErrors: string[];
}

/**
 * The app in web mode as a browser test drives it: a real server, the host on a temporary data
 * directory, the production build served by the web server, and Chromium.
 */
export interface BrowserApp {
  readonly ts: TestServer;
  readonly host: Host;
  readonly web: RunningWebServer;
  readonly browser: Browser;
  /** A new page, loaded on the app, its errors collected. */
  openPage(options?: BrowserContextOptions): Promise<AppPage>;
  /**
   * Quits the app and starts it again on the same data directory (a cold start with the saved
   * session); `host` and `web` are then the new ones, and pages must be opened again.
   */
  restart(): Promise<void>;
  /** Stops all of it and removes the temporary directory. */
  close(): Promise<void>;
}

/** Builds the app (once per run), launches Chromium and starts a test server (at once), then the host and the web server. */
export async function startBrowserApp(options: BrowserAppOptions): Promise<BrowserApp> {
  const outDir = await tempDir(`tandem-${options.name}-`);
  const running: { browser?: Browser; ts?: TestServer; host?: Host; web?: RunningWebServer } = {};
  const close = async () => {
    await running.browser?.close();
    await running.web?.close();
    await running.host?.close();
    await running.ts?.stop();
    await rm(outDir, { recursive: true, force: true });
  };
  try {
    const [browser, ts, rendererDir] = await Promise.allSettled([launchChromium(), startTestServer(options.server), buildApp()]);
    if (browser.status === "fulfilled") running.browser = browser.value;
    if (ts.status === "fulfilled") running.ts = ts.value;
    if (browser.status === "rejected") throw browser.reason;
    if (ts.status === "rejected") throw ts.reason;
    if (rendererDir.status === "rejected") throw rendererDir.reason;
    const start = async () => {
      running.host = await startTestHost(path.join(outDir, "data"), options.host);
      running.web = await startWebServer(running.host.api, { rendererDir: rendererDir.value });
      return { host: running.host, web: running.web };
    };
    let current = await start();
    return {
      browser: browser.value,
      ts: ts.value,
      get host() {
        return current.host;
      },
      get web() {
        return current.web;
      },
      async openPage(pageOptions) {
        const page = await browser.value.newPage(pageOptions);
        const pageErrors = collectPageErrors(page);
        await page.goto(current.web.url);
        return { page, pageErrors };
      },
      async restart() {
        await current.web.close();
        await current.host.close();
        current = await start();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
