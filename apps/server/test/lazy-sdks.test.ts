import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN_PATH, runCli } from "./harness";

/**
 * The SDKs most servers never need are loaded on first use, not at start (each one slows every
 * start): the built server, as `npm start` runs it, with a module hook that reports every file Node
 * loads. The build bundles these packages into the chunks that use them (esbuild marks each bundled
 * file with its `node_modules/...` path), so a file loaded is searched for them: none at start; the
 * A2A SDK once an agent card is asked for.
 */
const LAZY = ["@a2a-js/sdk", "@modelcontextprotocol/sdk"];
const HOOK = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from "node:module";
registerHooks({
  load(url, context, next) {
    if (url.startsWith("file:")) process.stderr.write("LOADED " + url + "\\n");
    return next(url, context);
  },
});`)}`;

/** The lazy packages whose code the files hold (bundled in, or the package's own files). */
function packagesIn(urls: readonly string[]): string[] {
  const found = new Set<string>();
  for (const url of urls) {
    const file = fileURLToPath(url);
    const text = file.includes(`${path.sep}node_modules${path.sep}`) ? file : readFileSync(file, "utf8");
    for (const name of LAZY) if (text.includes(`node_modules/${name}/`)) found.add(name);
  }
  return [...found].sort();
}

describe("packages loaded on first use", () => {
  let dataDir: string;
  let child: ChildProcess;
  let log = "";
  const loaded = () => packagesIn([...log.matchAll(/^LOADED (\S+)$/gm)].map((match) => match[1] as string));

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "tandem-lazy-"));
    expect((await runCli(["users", "add", "ada", "--data-dir", dataDir, "--create-database"])).code).toBe(0);
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it("starts without the A2A and MCP SDKs, and loads the A2A SDK for the first agent card", async () => {
    child = spawn(process.execPath, ["--import", HOOK, BIN_PATH, "serve", "--port", "0", "--data-dir", dataDir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr?.on("data", (chunk: Buffer) => {
        log += chunk.toString();
        const match = /"url":"(http:\/\/[^"]+)"/.exec(log);
        if (match?.[1]) resolve(match[1]);
      });
      child.once("exit", (code) => reject(new Error(`server exited with ${code} before listening:\n${log}`)));
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(loaded()).toEqual([]);

    const card = await fetch(`${url}/a2a/ada_coo/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
    expect(((await card.json()) as { supportedInterfaces: unknown[] }).supportedInterfaces).toHaveLength(2);
    expect(loaded()).toEqual(["@a2a-js/sdk"]);
  });
});
