/**
 * `npm run bench -- api`: what the API costs over plain Express. Loads an authenticated
 * `GET /api/v1/os/folders` on the real server, then a bare Express 5 app that answers the same
 * JSON from memory, and compares their throughput. The gap is everything Tandem does per request:
 * routing through the route table, API-key lookup and hash check, rate limiting, query
 * validation and the SQLite query.
 */
import express from "express";
import { type ListeningServer, listenOnFreePort, requestExpecting, type SampledResponse } from "./lib/http";
import { combineRounds, type LoadResult, loadSettingsFromEnv, measureInRounds, median } from "./lib/load";
import { describeMachine, describeSettings, formatLoadTable, formatStatusCodes } from "./lib/report";
import { type BenchTandem, startBenchTandem } from "./lib/tandem";

const FOLDER_COUNT = 20;
const LIST_FOLDERS_PATH = "/api/v1/os/folders";
/** Ours must reach at least this share of bare Express's throughput. */
const TARGET_PERCENT = 70;

/** Gives the user a realistic workspace: `init` (which adds General) and some folders, all over HTTP. */
async function seedWorkspace(tandem: BenchTandem): Promise<void> {
  const { apiUrl } = tandem.server;
  const headers = tandem.authHeaders;
  await requestExpecting(200, `${apiUrl}/init`, { method: "POST", headers, body: {} });
  for (let i = 1; i <= FOLDER_COUNT; i++) {
    const name = `Folder ${String(i).padStart(2, "0")}`;
    await requestExpecting(201, `${apiUrl}/os/folders`, { method: "POST", headers, body: { name } });
  }
}

/** The response the bare app will replay; checked so we know the key works and the data is there. */
async function sampleListFolders(tandem: BenchTandem): Promise<SampledResponse> {
  const sample = await requestExpecting(200, `${tandem.server.url}${LIST_FOLDERS_PATH}`, { headers: tandem.authHeaders });
  const { folders } = JSON.parse(sample.body) as { folders?: unknown[] };
  // General plus ours; fewer means seeding went wrong and we would measure a smaller body.
  if (folders?.length !== FOLDER_COUNT + 1) {
    throw new Error(`expected ${FOLDER_COUNT + 1} folders, the server listed ${folders?.length ?? "none"}`);
  }
  return sample;
}

/**
 * The baseline: Express 5 with the same app settings as ours (no ETag, no X-Powered-By, so the
 * responses are byte-identical) and one handler. It serialises the parsed body on every request
 * rather than sending a cached string, as a handler answering from objects does. (Ours sends
 * the JSON text SQLite builds for the listing, byte for byte what serialising would give, so it
 * no longer pays for JSON.stringify; the baseline stays as it was, so earlier figures compare.)
 */
function buildBareApp(body: unknown): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.get(LIST_FOLDERS_PATH, (_req, res) => {
    res.json(body);
  });
  return app;
}

/** Makes sure both targets answer the same bytes the same way; otherwise the ratio compares different work. */
function assertSameResponse(ours: SampledResponse, bare: SampledResponse): void {
  if (ours.body !== bare.body || ours.contentType !== bare.contentType) {
    throw new Error("the bare app's response differs from the server's; the comparison would be unfair");
  }
}

function formatRate(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function ratioPercent(ours: LoadResult, bare: LoadResult): number {
  return bare.requestsPerSecond > 0 ? (ours.requestsPerSecond / bare.requestsPerSecond) * 100 : 0;
}

/** One line per round as it finishes, so a long run shows progress and drift is visible. */
function printRound(round: number, [ours, bare]: readonly LoadResult[]): void {
  if (!ours || !bare) return;
  const order = round % 2 === 0 ? "tandem first" : "bare first  ";
  process.stdout.write(
    `round ${String(round + 1).padStart(2)} (${order}): tandem ${formatRate(ours.requestsPerSecond).padStart(6)} req/s, ` +
      `bare ${formatRate(bare.requestsPerSecond).padStart(6)} req/s, ours/bare ${ratioPercent(ours, bare).toFixed(1).padStart(5)}%\n`,
  );
}

/**
 * The same comparison by main-thread CPU time per request (bare's over ours, median of the
 * rounds): what the throughput ratio would be if the servers' thread had the core to itself. It
 * moves far less with load from elsewhere than throughput does, so it says whether a change helped
 * when the machine is too busy for the throughput ratio to.
 */
function cpuRatioLine(oursRounds: readonly LoadResult[], bareRounds: readonly LoadResult[]): string {
  const ratios = oursRounds.map((round, i) => ((bareRounds[i] as LoadResult).cpuMicrosPerRequest / round.cpuMicrosPerRequest) * 100);
  if (ratios.some((ratio) => !Number.isFinite(ratio))) return "cpu per request: not measured (this Node has no process.threadCpuUsage)";
  const ours = median(oursRounds.map((r) => r.cpuMicrosPerRequest));
  const bare = median(bareRounds.map((r) => r.cpuMicrosPerRequest));
  return (
    `main-thread cpu per request: tandem ${ours.toFixed(0)} µs, bare ${bare.toFixed(0)} µs; ` +
    `bare/ours median of rounds ${median(ratios).toFixed(1)}% (range ${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}%)`
  );
}

function printReport(oursRounds: readonly LoadResult[], bareRounds: readonly LoadResult[]): boolean {
  const ours = combineRounds(oursRounds);
  const bare = combineRounds(bareRounds);
  const ratios = oursRounds.map((round, i) => ratioPercent(round, bareRounds[i] as LoadResult));
  const medianRatio = median(ratios);
  const verdict = medianRatio >= TARGET_PERCENT ? "PASS" : "BELOW";
  const lines = [
    "",
    formatLoadTable([
      { name: "tandem  GET /api/v1/os/folders (auth + SQLite)", result: ours },
      { name: "bare    Express 5, same JSON from memory", result: bare },
    ]),
    "(all rounds together: req/s over the summed time, p50/p99 the rounds' medians)",
    "",
    `status codes: tandem ${formatStatusCodes(ours.statusCodes)}; bare ${formatStatusCodes(bare.statusCodes)}`,
    `throughput ours/bare per round: ${ratios.map((r) => `${r.toFixed(1)}%`).join(", ")}`,
    `throughput ours/bare: median of rounds ${medianRatio.toFixed(1)}% (range ${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}%; all rounds together ${ratioPercent(ours, bare).toFixed(1)}%)`,
    `target: median ≥ ${TARGET_PERCENT}% of bare  ${verdict}`,
    cpuRatioLine(oursRounds, bareRounds),
  ];
  const failures = ours.errors + ours.non2xx + bare.errors + bare.non2xx;
  if (failures > 0) {
    lines.push(`WARNING: ${failures} requests failed or were not 2xx during measurement; the numbers above are not trustworthy.`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return failures === 0;
}

export async function run(): Promise<void> {
  const settings = loadSettingsFromEnv();
  const tandem = await startBenchTandem();
  let bareServer: ListeningServer | undefined;
  try {
    await seedWorkspace(tandem);
    const ours = await sampleListFolders(tandem);
    bareServer = await listenOnFreePort(buildBareApp(JSON.parse(ours.body)));
    const bareUrl = `${bareServer.url}${LIST_FOLDERS_PATH}`;
    assertSameResponse(ours, await requestExpecting(200, bareUrl));

    process.stdout.write(
      `${describeMachine()}\n${describeSettings(settings)}\n` +
        `workload: ${FOLDER_COUNT + 1} folders, response ${ours.body.length} bytes, SQLite in ${tandem.dataDir}\n\n`,
    );
    // Both get the same request bytes; the bare app just ignores the credential.
    const headers = { ...tandem.authHeaders };
    process.stdout.write(`warming up (${settings.warmupSeconds} s each, not counted)…\n`);
    const [oursRounds = [], bareRounds = []] = await measureInRounds(
      [
        { url: `${tandem.server.url}${LIST_FOLDERS_PATH}`, headers },
        { url: bareUrl, headers },
      ],
      settings,
      printRound,
    );
    // Failed requests make the numbers meaningless: say so in the exit code, not only in the text.
    if (!printReport(oursRounds, bareRounds)) process.exitCode = 1;
  } finally {
    await bareServer?.close();
    await tandem.close();
  }
}
