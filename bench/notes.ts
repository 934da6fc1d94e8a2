/**
 * `npm run bench -- notes`: the notes feature on a realistic workspace (10,000 notes of 50–400
 * words in 50 folders). Seeds it directly (documents and views, as the server would derive them)
 * in a child process, and starts the real server on it in this one. Then opens 1,000 note
 * documents at once over sync and reports what that costs the server in memory (first, while the
 * heap is still that of an idle server), and measures one request at a time over HTTP: listing a
 * folder, full-text search and grep across every note, against trivial requests as the floor.
 */
import { noteDocName, workspaceDocName } from "@tandem/core";
import { type Child, startChild } from "./lib/child";
import { describeLoad, positiveIntFromEnv, stringFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, sampleSequential } from "./lib/latency";
import { formatDeltaMiB, formatMiB, type MemoryReading, settledMemory } from "./lib/memory";
import { DEFAULT_SEED_OPTIONS, type SeedOptions } from "./lib/notes-seed";
import { describeMachine, formatTable } from "./lib/report";
import { type SeededTandem, startSeededTandem } from "./lib/seeded-tandem";
import type { OpenDocsAnswer, OpenDocsRequest } from "./lib/sync-clients-child";

interface NotesSettings {
  readonly seed: SeedOptions;
  readonly warmup: number;
  readonly requests: number;
  readonly grepWarmup: number;
  readonly grepRequests: number;
  readonly searchQuery: string;
  readonly openDocs: number;
  readonly docsPerSocket: number;
  /** The folder to list should hold about this many notes. */
  readonly folderTarget: number;
}

/**
 * Hocuspocus resets a connection that has more than this many documents waiting for
 * authentication (its `maxPendingDocuments`, which Tandem leaves at the default); opening more
 * than this many at once over one connection would measure reconnect loops.
 */
const MAX_DOCS_PER_SOCKET = 100;

function settingsFromEnv(): NotesSettings {
  const docsPerSocket = positiveIntFromEnv("BENCH_NOTES_DOCS_PER_SOCKET", 50);
  if (docsPerSocket > MAX_DOCS_PER_SOCKET) {
    throw new Error(
      `BENCH_NOTES_DOCS_PER_SOCKET must be at most ${MAX_DOCS_PER_SOCKET}: Hocuspocus resets a connection with more documents pending authentication`,
    );
  }
  const notes = positiveIntFromEnv("BENCH_NOTES", DEFAULT_SEED_OPTIONS.notes);
  const folders = positiveIntFromEnv("BENCH_NOTES_FOLDERS", DEFAULT_SEED_OPTIONS.folders);
  return {
    seed: { ...DEFAULT_SEED_OPTIONS, notes, folders, seed: positiveIntFromEnv("BENCH_NOTES_SEED", DEFAULT_SEED_OPTIONS.seed) },
    warmup: positiveIntFromEnv("BENCH_NOTES_WARMUP", 20),
    requests: positiveIntFromEnv("BENCH_NOTES_REQUESTS", 200),
    grepWarmup: positiveIntFromEnv("BENCH_NOTES_GREP_WARMUP", 3),
    grepRequests: positiveIntFromEnv("BENCH_NOTES_GREP_REQUESTS", 30),
    searchQuery: stringFromEnv("BENCH_NOTES_SEARCH_QUERY", "budget review"),
    openDocs: Math.min(notes, positiveIntFromEnv("BENCH_NOTES_OPEN_DOCS", 1000)),
    docsPerSocket,
    folderTarget: Math.round(notes / folders),
  };
}

interface FolderListing {
  folders: { id: number; name: string; fileCount: number }[];
}
interface NoteListing {
  notes: { uuid: string }[];
  totalNotes: number;
}
interface SearchAnswer {
  results: { id: number; title: string; snippet: string }[];
}
interface GrepAnswer {
  results: unknown[];
  summary: { notesScanned: number; notesMatched: number; truncated: boolean };
}

interface Target {
  readonly name: string;
  readonly stats: LatencyStats;
  /** p50 must be at most this, if the target has one. */
  readonly targetP50Ms?: number;
}

/** Checks the seeded data answers as expected, so the timings are of real work and not of empty results. */
async function checkResponses(
  client: KeepAliveClient,
  tandem: SeededTandem,
  folderId: number,
  folderNotes: number,
  settings: NotesSettings,
) {
  const listing = JSON.parse((await client.expect(200, "GET", `/api/v1/os/notes?folderId=${folderId}&limit=50`)).body) as NoteListing;
  if (listing.notes.length !== Math.min(50, folderNotes) || listing.totalNotes !== folderNotes) {
    throw new Error(`listing folder ${folderId}: ${listing.notes.length} notes of ${listing.totalNotes}, expected 50 of ${folderNotes}`);
  }
  const search = JSON.parse(
    (await client.expect(200, "POST", "/api/v1/os/notes/search", { query: settings.searchQuery })).body,
  ) as SearchAnswer;
  if (search.results.length === 0) throw new Error(`search for "${settings.searchQuery}" found nothing`);
  const grep = JSON.parse(
    (await client.expect(200, "POST", "/api/v1/os/notes/grep", { pattern: settings.seed.rareWord })).body,
  ) as GrepAnswer;
  const { notesScanned, notesMatched } = grep.summary;
  if (notesScanned !== tandem.seed.notes || notesMatched !== tandem.seed.notesWithRareWord) {
    throw new Error(
      `grep scanned ${notesScanned} notes and matched ${notesMatched}; expected ${tandem.seed.notes} and ${tandem.seed.notesWithRareWord}`,
    );
  }
  return { searchResults: search.results.length, grepMatched: notesMatched, firstHit: search.results[0]?.title ?? "" };
}

async function measureHttp(client: KeepAliveClient, folderId: number, settings: NotesSettings): Promise<Target[]> {
  const { warmup, requests: count } = settings;
  const get = (path: string) => async () => {
    await client.expect(200, "GET", path);
  };
  const post = (path: string, body: unknown) => async () => {
    await client.expect(200, "POST", path, body);
  };
  const targets: Target[] = [];
  const step = (name: string) => process.stdout.write(`measuring ${name}…\n`);

  step("GET /healthz");
  targets.push({ name: "GET /healthz (floor: no auth, no SQL)", stats: await sampleSequential(get("/healthz"), { warmup, count }) });
  step("GET /api/v1/identity");
  targets.push({
    name: "GET /api/v1/identity (floor + auth, 1 row)",
    stats: await sampleSequential(get("/api/v1/identity"), { warmup, count }),
  });
  step("list");
  targets.push({
    name: `GET /os/notes?folderId=${folderId}&limit=50`,
    stats: await sampleSequential(get(`/api/v1/os/notes?folderId=${folderId}&limit=50`), { warmup, count }),
    targetP50Ms: 15,
  });
  step("search");
  targets.push({
    name: `POST /os/notes/search "${settings.searchQuery}"`,
    stats: await sampleSequential(post("/api/v1/os/notes/search", { query: settings.searchQuery }), { warmup, count }),
    targetP50Ms: 30,
  });
  step("grep");
  targets.push({
    name: `POST /os/notes/grep "${settings.seed.rareWord}" (all notes)`,
    stats: await sampleSequential(post("/api/v1/os/notes/grep", { pattern: settings.seed.rareWord, mode: "literal" }), {
      warmup: settings.grepWarmup,
      count: settings.grepRequests,
    }),
    targetP50Ms: 300,
  });
  return targets;
}

function latencyTable(targets: readonly Target[]): string {
  const header = [
    "request (sequential, one keep-alive connection)",
    "n",
    "min",
    "p50",
    "p90",
    "p99",
    "max",
    "mean",
    "target p50",
    "verdict",
  ];
  const rows = targets.map(({ name, stats, targetP50Ms }) => [
    name,
    String(stats.count),
    formatMs(stats.minMs),
    formatMs(stats.p50Ms),
    formatMs(stats.p90Ms),
    formatMs(stats.p99Ms),
    formatMs(stats.maxMs),
    formatMs(stats.meanMs),
    targetP50Ms === undefined ? "-" : `≤ ${targetP50Ms} ms`,
    targetP50Ms === undefined ? "(baseline)" : stats.p50Ms <= targetP50Ms ? "PASS" : "BELOW",
  ]);
  return `${formatTable(header, rows)}\nall times in ms, client-measured (request sent → whole body read); same process as the server`;
}

async function waitForDocumentsCount(tandem: SeededTandem, wanted: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let count = tandem.server.context.sync.hocuspocus.getDocumentsCount();
  while (count !== wanted && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    count = tandem.server.context.sync.hocuspocus.getDocumentsCount();
  }
  return count;
}

/** Opening gives up after this long (a run on a loaded 2-core machine takes well under a minute). */
const OPEN_TIMEOUT_MS = 300_000;

interface OpenResult {
  readonly workspace: OpenDocsAnswer;
  readonly notes: OpenDocsAnswer;
  /** With the workspace document alone open. */
  readonly workspaceOpen: MemoryReading;
  readonly open: MemoryReading;
  readonly afterClose: MemoryReading;
  readonly documentsOpen: number;
  readonly documentsAfterClose: number;
}

/**
 * Opens the workspace document (as a client does first: it lists the notes), then `openDocs`
 * note documents at once, in a child process so the clients' copies are not counted here.
 */
async function openManyDocs(tandem: SeededTandem, uuids: readonly string[], settings: NotesSettings): Promise<OpenResult> {
  let clients: Child | undefined;
  try {
    clients = await startChild(new URL("./lib/sync-clients-child.ts", import.meta.url));
    const base = { url: tandem.server.syncUrl, token: tandem.apiKey, timeoutMs: OPEN_TIMEOUT_MS };
    process.stdout.write("opening the workspace document over sync…\n");
    const workspace = await clients.call<OpenDocsAnswer>("open", {
      ...base,
      names: [workspaceDocName(tandem.userId)],
      docsPerSocket: 1,
    } satisfies OpenDocsRequest);
    const workspaceOpen = await settledMemory();
    process.stdout.write(`opening ${uuids.length} note documents at once (${settings.docsPerSocket} per connection)…\n`);
    const notes = await clients.call<OpenDocsAnswer>("open", {
      ...base,
      names: uuids.map(noteDocName),
      docsPerSocket: settings.docsPerSocket,
    } satisfies OpenDocsRequest);
    if (notes.synced !== uuids.length || workspace.synced !== 1) {
      throw new Error(
        `only ${notes.synced} of ${uuids.length} notes and ${workspace.synced} of 1 workspace synced (${notes.refused} refused)`,
      );
    }
    const documentsOpen = tandem.server.context.sync.hocuspocus.getDocumentsCount();
    const open = await settledMemory();
    await clients.call("close");
    const documentsAfterClose = await waitForDocumentsCount(tandem, 0, 30_000);
    const afterClose = await settledMemory();
    return { workspace, notes, workspaceOpen, open, afterClose, documentsOpen, documentsAfterClose };
  } finally {
    await clients?.close();
  }
}

function memoryTable(idle: MemoryReading, open: OpenResult, afterHttp: MemoryReading, docs: number): string {
  const row = (name: string, reading: MemoryReading, reference?: MemoryReading) => [
    name,
    formatMiB(reading.rss),
    reference ? formatDeltaMiB(reading.rss - reference.rss) : "",
    formatMiB(reading.heapUsed),
    reference ? formatDeltaMiB(reading.heapUsed - reference.heapUsed) : "",
    formatMiB(reading.external),
  ];
  const header = ["server process (after full GC; Δ against idle)", "rss", "Δ rss", "heap used", "Δ heap", "external"];
  const rows = [
    row("idle: seeded server started, no request yet", idle),
    row("workspace document open (1 document)", open.workspaceOpen, idle),
    row(`${open.documentsOpen} documents open (workspace + ${docs} notes)`, open.open, idle),
    row(`clients gone (${open.documentsAfterClose} documents still open)`, open.afterClose, idle),
    row("after the HTTP measurements above", afterHttp, idle),
  ];
  const notesRss = open.open.rss - open.workspaceOpen.rss;
  const notesHeap = open.open.heapUsed - open.workspaceOpen.heapUsed;
  return [
    formatTable(header, rows),
    `${docs} note documents on top of the workspace: ${formatDeltaMiB(notesRss)} rss, ${formatDeltaMiB(notesHeap)} heap; ` +
      `per note document ${(notesRss / docs / 1024).toFixed(1)} KiB rss, ${(notesHeap / docs / 1024).toFixed(1)} KiB heap` +
      ` (the clients ran in a child process; its RSS was ${formatMiB(open.notes.childRss)})`,
  ].join("\n");
}

export async function run(): Promise<void> {
  const settings = settingsFromEnv();
  process.stdout.write(`${describeMachine()}\n${describeLoad()}\n`);
  process.stdout.write(
    `seeding ${settings.seed.notes.toLocaleString("en-US")} notes in ${settings.seed.folders} folders (child process)…\n`,
  );
  const tandem = await startSeededTandem(settings.seed);
  const client = new KeepAliveClient(tandem.server.url, tandem.authHeaders);
  try {
    const { seed } = tandem;
    process.stdout.write(
      [
        `seeded: ${seed.notes.toLocaleString("en-US")} notes (${seed.rootNotes} at the root) in ${seed.folders.length} folders, ` +
          `${seed.totalWords.toLocaleString("en-US")} words (${seed.minWords}–${seed.maxWords} per note), ` +
          `${(seed.documentBytes / 1024 ** 2).toFixed(1)} MiB of Yjs state; "${settings.seed.rareWord}" in ${seed.notesWithRareWord} notes`,
        `seeding time: ${(tandem.seedWallMs / 1000).toFixed(1)} s in all = ${(seed.buildMs / 1000).toFixed(1)} s building text and ` +
          `Yjs documents + ${(seed.storeMs / 1000).toFixed(1)} s storing documents and materialising views (batches of ${settings.seed.batchSize}, one transaction each)`,
        "",
      ].join("\n"),
    );

    // Memory first, on the idle server: the HTTP measurements (grep reads every note's text) would
    // leave the heap grown, and an already-grown heap hides what open documents cost.
    const idle = await settledMemory();
    const uuids = await tandem.server.context.db
      .selectFrom("notes")
      .select("uuid")
      .where("owner_id", "=", tandem.userId)
      .orderBy("id")
      .limit(settings.openDocs)
      .execute();
    const open = await openManyDocs(
      tandem,
      uuids.map((row) => row.uuid),
      settings,
    );

    const folders = JSON.parse((await client.expect(200, "GET", "/api/v1/os/folders")).body) as FolderListing;
    // The folder whose size is closest to the average (about 200 notes with the defaults).
    const folder = [...folders.folders].sort(
      (a, b) => Math.abs(a.fileCount - settings.folderTarget) - Math.abs(b.fileCount - settings.folderTarget),
    )[0];
    if (!folder) throw new Error("the seeded workspace has no folders");
    const checks = await checkResponses(client, tandem, folder.id, folder.fileCount, settings);
    process.stdout.write(
      [
        `listed folder: "${folder.name}" (id ${folder.id}, ${folder.fileCount} notes); search "${settings.searchQuery}": ` +
          `${checks.searchResults} results (limit 20), best "${checks.firstHit}"; grep "${settings.seed.rareWord}": ${checks.grepMatched} notes matched`,
        `settings: ${settings.warmup} warm-up + ${settings.requests} measured requests per target (grep: ${settings.grepWarmup} + ${settings.grepRequests}), ` +
          "one at a time over one keep-alive connection",
        "",
      ].join("\n"),
    );
    const targets = await measureHttp(client, folder.id, settings);
    const afterHttp = await settledMemory();

    process.stdout.write(
      [
        "",
        latencyTable(targets),
        "",
        `sync: workspace document (${seed.notes.toLocaleString("en-US")} notes) synced in ${formatMs(open.workspace.ms)} ms; ` +
          `${open.notes.synced} note documents opened at once synced in ${formatMs(open.notes.ms)} ms over ${open.notes.sockets} connections ` +
          `(${((open.notes.synced / open.notes.ms) * 1000).toFixed(0)} documents/s)`,
        memoryTable(idle, open, afterHttp, settings.openDocs),
        "",
      ].join("\n"),
    );
    if (open.documentsAfterClose !== 0)
      process.stdout.write(`WARNING: ${open.documentsAfterClose} documents were still open after the clients left\n`);
  } finally {
    client.close();
    await tandem.close();
  }
}
